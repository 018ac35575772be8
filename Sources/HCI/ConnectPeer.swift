/// A peer as the controller's Filter Accept List and LE Create Connection name it.
public struct ConnectPeer: Hashable, Sendable, CustomStringConvertible {
    public var address: BluetoothAddress
    public var addressType: AddressType

    public init(address: BluetoothAddress, addressType: AddressType) {
        self.address = address
        self.addressType = addressType
    }

    /// Connection Complete reports resolved identities as 0x02/0x03; the accept list
    /// holds them as 0x00/0x01. Compare on the identity kind.
    public func matches(_ address: BluetoothAddress, _ type: AddressType) -> Bool {
        guard address == self.address else { return false }
        return (type.rawValue & 0x01) == (addressType.rawValue & 0x01)
    }

    public var description: String { "\(address)/\(addressType)" }
}

extension AddressType {
    /// The accept list and LE Create Connection take 0x00/0x01; controllers that resolved
    /// an RPA report the identity as 0x02/0x03.
    public var forAcceptList: AddressType { AddressType(rawValue: rawValue & 0x01) }

    /// For a configured address never heard yet: random when its top bits say static random.
    public static func guess(for address: BluetoothAddress) -> AddressType {
        address.rawValue >> 46 == 0b11 ? .randomDevice : .publicDevice
    }
}
