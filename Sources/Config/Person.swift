import Advertisements

/// `[[person]]`: someone whose presence at the door is tracked.
public struct Person: Hashable, Sendable {
    /// Unique among persons; sent as `userId`.
    public var id: String
    public var name: String?
    /// A check-in needs a valid proof of a genuine tag (see docs/proof-protocol.md).
    public var requireProof: Bool
    /// At least one, in file order.
    public var tags: [Tag]

    public init(id: String, name: String? = nil, requireProof: Bool = false, tags: [Tag]) {
        self.id = id
        self.name = name
        self.requireProof = requireProof
        self.tags = tags
    }
}

/// `[[person.tag]]`: one beacon a person carries.
public struct Tag: Hashable, Sendable {
    /// Unique across all persons; the proof key derivation uses it.
    public var id: String
    /// At least one; an advertisement matching any of them is this tag. Written order:
    /// ibeacon, eddystone_uid, address, irk.
    public var identities: [TagIdentity]
    /// The tag's own 32-byte proof key; `nil` means derived from the master key.
    /// Secret: never printed.
    public var key: [UInt8]?
    public var track: Track

    public init(id: String, identities: [TagIdentity], key: [UInt8]? = nil, track: Track = .advertising) {
        self.id = id
        self.identities = identities
        self.key = key
        self.track = track
    }

    /// What presence follows for this tag (see docs/persistent-connect.md).
    public enum Track: String, CaseIterable, Hashable, Sendable {
        /// Advertisements' RSSI.
        case advertising
        /// A kept-open connection and its RSSI; a link loss means UNCONFIRMED.
        case connection
    }
}
