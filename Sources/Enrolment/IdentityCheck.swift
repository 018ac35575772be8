import Advertisements
import BluetoothCrypto
import HCI
import SecurityManager

/// Whether the identity a phone handed over belongs to the phone on the link and to
/// nobody else (docs/pairing.md, "The identity belongs to the link"; docs/security.md).
/// Pure: what is known of the other persons comes in at construction — the configuration
/// file's persons for the standalone command, the persons in force (file and server
/// roster) and the addresses their tags were recently seen with for the agent.
public struct IdentityCheck: Sendable {
    /// The person being enrolled: their own identities are no conflict (a phone enrolled again).
    public let personId: String
    /// The other persons' IRKs (most significant octet first) and addresses, each with
    /// the person it is configured for.
    var irks: [[UInt8]: String] = [:]
    var addresses: [BluetoothAddress: String] = [:]
    /// Resolvable private addresses another person's tag was recently seen with.
    var recentlySeen: [(address: BluetoothAddress, personId: String)] = []

    /// Nobody else known: only the link ties (the identity to the link's address) are checked.
    public init(enrolling personId: String = "") {
        self.personId = personId
    }

    public init(enrolling personId: String, persons: [(personId: String, identities: [TagIdentity])],
                recentlySeen: [(address: BluetoothAddress, personId: String)] = []) {
        self.personId = personId
        for person in persons where person.personId != personId {
            for identity in person.identities {
                switch identity {
                case .irk(let key): irks[key] = irks[key] ?? person.personId
                case .address(let address): addresses[address] = addresses[address] ?? person.personId
                case .iBeacon, .eddystoneUID: break
                }
            }
        }
        self.recentlySeen = recentlySeen.filter { $0.personId != personId }
    }

    /// Why `identity`, handed over on a link the phone opened from `link`, is refused; nil
    /// when it is the phone's own and nobody else's. A nil IRK is the all-zero one (the
    /// phone has none): the identity address alone then identifies the phone.
    public func refusal(of identity: PeerIdentity, connectedFrom link: AddressWithType) -> IdentityRefusal? {
        let isResolvable = link.isRandom && link.address.randomAddressKind == .resolvablePrivate
        let isIdentityAddress = link.address == identity.address && link.isRandom == identity.isRandom
        let key = identity.irk.flatMap { IdentityResolvingKey($0.revealed.mostSignificantFirst) }
        // Tied to the link: the key resolves the private address the phone connected
        // from, or the phone connected from the identity address it gave.
        if let key {
            if isResolvable {
                guard key.resolves(link.address) else { return .irkDoesNotResolveTheLink(connectedFrom: link.address) }
            } else if !isIdentityAddress {
                return .identityAddressNotTheLinks(identity: identity.address, connectedFrom: link.address)
            }
        } else if !isIdentityAddress {
            return .allZeroIRK(connectedFrom: link.address)
        }
        // Nobody else's.
        if let key, let owner = irks[key.bytes] { return .irkOfAnotherPerson(owner) }
        if let owner = addresses[identity.address] { return .addressOfAnotherPerson(owner) }
        if let key, let seen = recentlySeen.first(where: { key.resolves($0.address) }) {
            return .resolvesAnotherPersonsAddress(personId: seen.personId, address: seen.address)
        }
        return nil
    }
}

/// Why an identity a phone handed over was refused: the phone is let go, the window goes on.
public enum IdentityRefusal: Hashable, Sendable {
    /// The IRK was all zeros (none), and the phone did not connect from its identity address.
    case allZeroIRK(connectedFrom: BluetoothAddress)
    /// The phone connected from a resolvable private address its IRK does not resolve.
    case irkDoesNotResolveTheLink(connectedFrom: BluetoothAddress)
    /// The phone connected from a public or static address other than the identity it gave.
    case identityAddressNotTheLinks(identity: BluetoothAddress, connectedFrom: BluetoothAddress)
    /// The IRK is already configured for this other person.
    case irkOfAnotherPerson(String)
    /// The identity address is already configured for this other person.
    case addressOfAnotherPerson(String)
    /// The IRK resolves an address this other person's tag was recently seen with.
    case resolvesAnotherPersonsAddress(personId: String, address: BluetoothAddress)

    /// A stable word for machines (`enroll --json`, the journal).
    public var code: String {
        switch self {
        case .allZeroIRK: "all-zero-irk"
        case .irkDoesNotResolveTheLink: "irk-does-not-resolve-the-link"
        case .identityAddressNotTheLinks: "identity-address-not-the-links"
        case .irkOfAnotherPerson: "irk-of-another-person"
        case .addressOfAnotherPerson: "address-of-another-person"
        case .resolvesAnotherPersonsAddress: "irk-resolves-another-persons-address"
        }
    }

    /// What the installer reads.
    public var message: String {
        "refused (\(code)): " + {
            switch self {
            case .allZeroIRK(let link):
                "the phone gave an all-zero identity key (no key) and connected from \(link), not from its identity "
                    + "address: nothing ties what it gave to this phone"
            case .irkDoesNotResolveTheLink(let link):
                "the identity key (IRK) the phone gave does not resolve the address it connected from (\(link)): "
                    + "it is not this phone's key"
            case .identityAddressNotTheLinks(let identity, let link):
                "the phone connected from \(link) but gave the identity address \(identity): it is not this phone's"
            case .irkOfAnotherPerson(let person):
                "the phone's identity key (IRK) is already configured for person \(person); "
                    + "remove it there first if this phone changed hands"
            case .addressOfAnotherPerson(let person):
                "the phone's identity address is already configured for person \(person); "
                    + "remove it there first if this phone changed hands"
            case .resolvesAnotherPersonsAddress(let person, let address):
                "the identity key (IRK) the phone gave resolves \(address), an address person \(person)'s tag was "
                    + "recently seen with: a key made to pass for theirs"
            }
        }()
    }
}
