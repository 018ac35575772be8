import HCI

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
    func matches(_ address: BluetoothAddress, _ type: AddressType) -> Bool {
        guard address == self.address else { return false }
        return (type.rawValue & 0x01) == (addressType.rawValue & 0x01)
    }

    public var description: String { "\(address)/\(addressType)" }
}
