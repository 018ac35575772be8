import HCI

/// Connectable undirected advertising (legacy ADV_IND, also through the extended
/// commands, so every central sees it) as the commands that put it on air, for the
/// peripheral modes: enrolment's window and the reference tag. From the controller's
/// public address, or from a random address when one is given.
public struct ConnectableAdvertising: Hashable, Sendable {
    public var advertisingData: [UInt8]
    public var scanResponseData: [UInt8]
    /// In 0.625 ms units.
    public var intervalUnits: UInt16
    /// A static random address to advertise from (its two top bits set); nil: public.
    public var randomAddress: BluetoothAddress?
    /// The controller's random address already is `randomAddress` (set at bring-up): the
    /// legacy commands do not set it again, which a controller refuses while it scans.
    public var randomAddressIsSet: Bool

    public init(advertisingData: [UInt8], scanResponseData: [UInt8] = [], intervalUnits: UInt16,
                randomAddress: BluetoothAddress? = nil, randomAddressIsSet: Bool = false) {
        self.advertisingData = advertisingData
        self.scanResponseData = scanResponseData
        self.intervalUnits = intervalUnits
        self.randomAddress = randomAddress
        self.randomAddressIsSet = randomAddressIsSet
    }

    /// A peripheral mode has the controller to itself: set 0.
    static let advertisingHandle: UInt8 = 0

    /// The commands, in order: legacy (random address unless set →) parameters (ADV_IND) → data →
    /// scan response → enable; extended: parameters of set 0 with legacy connectable
    /// scannable properties (→ its random address) → data → scan response → enable.
    public func startCommands(family: CommandFamily) -> [(HCIPacket, Opcode)] {
        let ownAddressType: AddressType = randomAddress == nil ? .publicDevice : .randomDevice
        switch family {
        case .legacy:
            let setsAddress = randomAddressIsSet ? nil : randomAddress
            return (setsAddress.map { [(LESetRandomAddressCommand(address: $0).packet, .leSetRandomAddress)] } ?? [])
                + [(LESetAdvertisingParametersCommand(intervalMin: intervalUnits, intervalMax: intervalUnits,
                                                      type: .connectableUndirected, ownAddressType: ownAddressType).packet,
                    .leSetAdvertisingParameters),
                   (LESetAdvertisingDataCommand(data: advertisingData).packet, .leSetAdvertisingData),
                   (LESetScanResponseDataCommand(data: scanResponseData).packet, .leSetScanResponseData),
                   (LESetAdvertisingEnableCommand(enable: true).packet, .leSetAdvertisingEnable)]
        case .extended:
            let handle = Self.advertisingHandle
            return [(LESetExtendedAdvertisingParametersCommand(
                        handle: handle, properties: [.legacy, .connectable, .scannable],
                        intervalMin: UInt32(intervalUnits), intervalMax: UInt32(intervalUnits),
                        ownAddressType: ownAddressType).packet,
                     .leSetExtendedAdvertisingParameters)]
                + (randomAddress.map {
                    [(LESetAdvertisingSetRandomAddressCommand(handle: handle, address: $0).packet, .leSetAdvertisingSetRandomAddress)]
                } ?? [])
                + [(LESetExtendedAdvertisingDataCommand(handle: handle, data: advertisingData).packet, .leSetExtendedAdvertisingData),
                   (LESetExtendedScanResponseDataCommand(handle: handle, data: scanResponseData).packet,
                    .leSetExtendedScanResponseData),
                   (LESetExtendedAdvertisingEnableCommand(enable: true, sets: [.init(handle: handle)]).packet,
                    .leSetExtendedAdvertisingEnable)]
        }
    }

    /// Advertising off (the controller also stops it by itself when a central connects).
    public static func stopCommand(family: CommandFamily) -> (HCIPacket, Opcode) {
        switch family {
        case .legacy: (LESetAdvertisingEnableCommand(enable: false).packet, .leSetAdvertisingEnable)
        case .extended: (LESetExtendedAdvertisingEnableCommand(enable: false, sets: [.init(handle: advertisingHandle)]).packet,
                         .leSetExtendedAdvertisingEnable)
        }
    }
}
