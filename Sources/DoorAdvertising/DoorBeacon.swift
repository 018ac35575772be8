import Advertisements

/// What the gateway advertises as the door's own beacon (`[advertise]`), as bytes for
/// the controller: advertising data, scan response data, the PDU type and the interval.
///
/// Both an iBeacon (30 bytes with its flags) and a 128-bit service UUID (18 bytes) do
/// not fit in one 31-byte legacy PDU. The decision:
///   * the iBeacon goes in the advertising data, because iOS CoreLocation ranges
///     iBeacon regions from the advertising PDU only (with Apple's exact
///     `02 01 06 1A FF 4C 00 02 15` prefix);
///   * the service UUID goes in the scan response, and the PDU becomes ADV_SCAN_IND
///     (scannable, non-connectable): phones scan actively in the foreground (Android's
///     `ScanFilter.setServiceUuid`, iOS `scanForPeripherals(withServices:)`), so their
///     controller sends SCAN_REQ and the filter matches the scan response.
///   * With only one of the two configured everything fits in the advertising data and
///     the PDU is ADV_NONCONN_IND (nothing to scan for).
/// Legacy PDUs are used in both command families, so every phone (also those without
/// extended scanning) sees the same thing.
public struct DoorBeacon: Hashable, Sendable {
    public enum PDUType: Hashable, Sendable {
        /// ADV_NONCONN_IND: everything is in the advertising data.
        case nonConnectable
        /// ADV_SCAN_IND: the scan response carries the service UUID.
        case scannable
    }

    /// The Core spec's legacy limits (Vol 6, Part B, 4.4.2.2): 20 ms for non-connectable
    /// undirected advertising; scannable undirected advertising was limited to 100 ms
    /// before 5.0 and older controllers still reject less.
    public static let minimumNonConnectableInterval = 20
    public static let minimumScannableInterval = 100
    /// 10.24 s, the largest legacy interval (0x4000 units).
    public static let maximumInterval = 10_240
    /// The flags an iBeacon carries: LE General Discoverable, BR/EDR not supported.
    public static let flagsValue: UInt8 = 0x06
    static let appleCompanyID: UInt16 = 0x004C
    static let iBeaconPayloadLength: UInt8 = 0x15

    public var advertisingData: [UInt8]
    /// Empty for a non-connectable beacon.
    public var scanResponseData: [UInt8]
    public var pduType: PDUType
    /// The interval actually used, in milliseconds, after clamping.
    public var intervalMilliseconds: Int
    /// Whether the configured interval was outside the limits for the PDU type.
    public var intervalWasClamped: Bool

    /// The interval in 0.625 ms units, as the HCI commands take it.
    public var intervalUnits: UInt16 {
        // ≤ 10240 ms → ≤ 16384 units: fits.
        UInt16(intervalMilliseconds * 8 / 5)
    }

    /// `nil` when neither an iBeacon nor a service UUID is given (nothing to advertise).
    public init?(intervalMilliseconds: Int, iBeacon: IBeacon?, serviceUUID: UUID128?) {
        var advertising: [UInt8] = [2, ADType.flags.rawValue, Self.flagsValue]
        var response: [UInt8] = []
        switch (iBeacon, serviceUUID) {
        case (nil, nil):
            return nil
        case (let beacon?, let uuid):
            advertising += Self.iBeaconStructure(beacon)
            if let uuid { response = Self.serviceUUIDStructure(uuid) }
        case (nil, let uuid?):
            advertising += Self.serviceUUIDStructure(uuid)
        }
        advertisingData = advertising
        scanResponseData = response
        pduType = response.isEmpty ? .nonConnectable : .scannable
        let minimum = pduType == .scannable ? Self.minimumScannableInterval : Self.minimumNonConnectableInterval
        let clamped = min(max(intervalMilliseconds, minimum), Self.maximumInterval)
        self.intervalMilliseconds = clamped
        intervalWasClamped = clamped != intervalMilliseconds
    }

    /// Apple's iBeacon manufacturer data: length 0x1A, type 0xFF, company 0x004C (LE),
    /// type 0x02, length 0x15, UUID (big-endian), major, minor (big-endian), power.
    static func iBeaconStructure(_ beacon: IBeacon) -> [UInt8] {
        var bytes: [UInt8] = [0x1A, ADType.manufacturerSpecificData.rawValue,
                              UInt8(truncatingIfNeeded: appleCompanyID), UInt8(truncatingIfNeeded: appleCompanyID >> 8),
                              0x02, iBeaconPayloadLength]
        bytes += beacon.uuid.bigEndianBytes
        bytes += [UInt8(truncatingIfNeeded: beacon.major >> 8), UInt8(truncatingIfNeeded: beacon.major),
                  UInt8(truncatingIfNeeded: beacon.minor >> 8), UInt8(truncatingIfNeeded: beacon.minor),
                  UInt8(bitPattern: beacon.measuredPower)]
        return bytes
    }

    /// Complete list of 128-bit service UUIDs with one entry: on air least significant
    /// byte first (the reverse of the textual form).
    static func serviceUUIDStructure(_ uuid: UUID128) -> [UInt8] {
        [17, ADType.completeServiceUUIDs128.rawValue] + uuid.bigEndianBytes.reversed()
    }
}
