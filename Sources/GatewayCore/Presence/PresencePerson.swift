import Advertisements

/// A person as the presence engine sees them: an id and the tags they carry.
public struct PresencePerson: Hashable, Sendable {
    /// Sent as `userId`; unique among persons.
    public var id: String
    /// A check-in needs a valid proof of one of the person's tags (see docs/proof-protocol.md).
    public var requireProof: Bool
    public var tags: [PresenceTag]

    public init(id: String, requireProof: Bool = false, tags: [PresenceTag]) {
        self.id = id
        self.requireProof = requireProof
        self.tags = tags
    }
}

/// One tag of a person: its id (for events and for carrying state across a reload) and
/// its index in the `TagMatcher` (`TagMatch.tagIndex`), the integer the hot path uses.
public struct PresenceTag: Hashable, Sendable {
    public var index: Int
    public var id: String

    public init(index: Int, id: String) {
        self.index = index
        self.id = id
    }
}

extension PresencePerson {
    /// Persons from matcher tags, grouped by `personId` in first-seen order, with each
    /// tag's index being its position in `tags` (as `TagMatcher` numbers them).
    /// `requireProof` lists the ids of persons that need a proof.
    public static func grouping(_ tags: [ConfiguredTag], requireProof: Set<String> = []) -> [PresencePerson] {
        var order: [String] = []
        var byId: [String: [PresenceTag]] = [:]
        for (index, tag) in tags.enumerated() {
            if byId[tag.personId] == nil { order.append(tag.personId) }
            byId[tag.personId, default: []].append(PresenceTag(index: index, id: tag.tagId))
        }
        return order.map { PresencePerson(id: $0, requireProof: requireProof.contains($0), tags: byId[$0] ?? []) }
    }
}
