import HCI

extension Tag {
    /// Where to connect to the tag before it has been heard: its first configured address,
    /// its type guessed from the address (static random addresses have 0b11 on top); nil
    /// without one (the tag is connected to as it is heard). The one place this guess is
    /// made: `run` and `prove` both ask here.
    public var configuredConnectPeer: ConnectPeer? {
        for case .address(let address) in identities {
            return ConnectPeer(address: address, addressType: AddressType.guess(for: address))
        }
        return nil
    }
}
