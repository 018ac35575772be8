import BluetoothCrypto
import HCI

/// How the two sides authenticated (Core Vol 3 Part H §2.3.5.1).
public enum PairingMethod: String, Hashable, Sendable {
    case justWorks = "just-works"
    case numericComparison = "numeric-comparison"
}

/// The identity a peer distributed (Identity Information and Identity Address
/// Information). The description shows the address, never the key.
public struct PeerIdentity: Hashable, Sendable {
    /// Nil when the peer sent an all-zero IRK: it has none (it does not use resolvable
    /// private addresses).
    public var irk: SecretKey128?
    /// A public or static random address.
    public var address: BluetoothAddress
    public var isRandom: Bool

    public init(irk: SecretKey128?, address: BluetoothAddress, isRandom: Bool) {
        self.irk = irk
        self.address = address
        self.isRandom = isRandom
    }
}

/// A completed pairing: what the peer gave. The LTK is not part of it (it encrypted this
/// link; nothing keeps it).
public struct PairingResult: Hashable, Sendable {
    public var method: PairingMethod
    /// Nil when the peer distributed no identity key.
    public var peerIdentity: PeerIdentity?

    public init(method: PairingMethod, peerIdentity: PeerIdentity?) {
        self.method = method
        self.peerIdentity = peerIdentity
    }
}
