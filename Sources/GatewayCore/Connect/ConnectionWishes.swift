import EventLoop
import HCI

/// Which tags want a connection now (docs/persistent-connect.md): a `require_proof` tag
/// whose person waits for a proof, or a connection-tracked tag whose person is not
/// OUTSIDE, each at the address it was last heard on (or its configured one).
///
/// Sans-IO and incremental: the driver says what changed — a tag was heard, a person's
/// state or proofs changed — and `update` re-decides only those tags, returning the
/// wants and unwants to hand to the connect scheduler. Nothing here walks the roster
/// per report or per tick: a report of a tag costs one array slot, and at most one
/// evaluation of that tag at the next `update` (none when heard again at its address
/// within `timeConditionsRecheck`, below).
///
/// Conditions that change with time alone (a proof growing older than `proof_ttl_s`, a
/// lockout running out) are re-decided when the tag is next heard, which is also when a
/// connection to it first becomes possible: an accept-list connect needs it to advertise.
/// A tag heard again at the address it was decided with is re-decided at most every
/// `timeConditionsRecheck`: those conditions run in minutes, and at a busy door every
/// present tag is heard in every read, which would otherwise re-decide them all (a
/// proof book and presence lookup each) several times a second for nothing.
public struct ConnectionWishes: Sendable {
    public struct Tag: Hashable, Sendable {
        public var tagId: String
        public var personId: String
        public var requireProof: Bool
        public var tracked: Bool
        /// A proof can only be tried with a key (the tag's own or one derived from the master key).
        public var hasKey: Bool
        /// From the configuration (an `address` identity); else learnt from advertisements.
        public var configuredPeer: ConnectPeer?

        public init(tagId: String, personId: String, requireProof: Bool, tracked: Bool, hasKey: Bool, configuredPeer: ConnectPeer?) {
            self.tagId = tagId
            self.personId = personId
            self.requireProof = requireProof
            self.tracked = tracked
            self.hasKey = hasKey
            self.configuredPeer = configuredPeer
        }
    }

    /// What the connect scheduler must be told.
    public enum Change: Hashable, Sendable {
        case want(tagIndex: Int, peer: ConnectPeer, tracked: Bool)
        case unwant(tagIndex: Int)
    }

    /// What a report of a tag reads and writes, by matcher tag index: one element of one
    /// array, so a report costs one cache line where a lookup in each of three hash tables
    /// cost several (at a busy door the tables are cold at every wake-up).
    private struct HeardSlot: Sendable {
        /// The tag can ever need a connection (it is in `tags`).
        var isConnectionTag = false
        /// In `pending`.
        var isPending = false
        var configuredPeer: ConnectPeer?
        /// Where the tag was last heard.
        var lastPeer: ConnectPeer?
        /// Heard again at `lastPeer` before this (ns), the tag is not re-decided.
        var recheckAt = Int64.min
    }

    /// How often hearing a tag at the same address re-decides it (docs/persistent-connect.md).
    public static let timeConditionsRecheck: Duration = .seconds(1)

    /// Only tags that can ever need a connection, by matcher tag index.
    public private(set) var tags: [Int: Tag] = [:]
    private var tagIndicesByPerson: [String: [Int]] = [:]
    /// Up to the largest index in `tags`.
    private var slots: [HeardSlot] = []
    /// What the scheduler was last told it is wanted with (tag index → peer).
    public private(set) var wanted: [Int: ConnectPeer] = [:]
    /// Tags to re-decide at the next `update`, without repeats.
    private var pending: [Int] = []
    /// Tags decided so far: the measure of work the tests hold flat as the roster grows.
    public private(set) var tagsVisited = 0

    /// Every tag is decided at the first `update`.
    public init(tags: [Int: Tag] = [:]) {
        self.tags = tags
        slots = Array(repeating: HeardSlot(), count: max(0, (tags.keys.max() ?? -1) + 1))
        for (index, tag) in tags.sorted(by: { $0.key < $1.key }) where index >= 0 {
            tagIndicesByPerson[tag.personId, default: []].append(index)
            slots[index].isConnectionTag = true
            slots[index].configuredPeer = tag.configuredPeer
            mark(index)
        }
    }

    /// Where the tag was last heard (nil for a tag that never needs a connection).
    public func lastPeer(_ tagIndex: Int) -> ConnectPeer? {
        slots.indices.contains(tagIndex) ? slots[tagIndex].lastPeer : nil
    }

    /// Whether `update` has anything to re-decide (the driver skips the call otherwise).
    public var hasPending: Bool { !pending.isEmpty }

    // MARK: Inputs

    /// An advertisement (or connection) of a tag: remember where it is and re-decide it.
    public mutating func heard(tagIndex: Int, address: BluetoothAddress, addressType: AddressType, at now: Instant) {
        guard tagIndex >= 0, tagIndex < slots.count, slots[tagIndex].isConnectionTag else { return }
        // A configured address is the one to connect to (the tag may also be heard through
        // another identity elsewhere); hearing it tells its address type for sure.
        if let configured = slots[tagIndex].configuredPeer, configured.address != address { return }
        let peer = ConnectPeer(address: address, addressType: addressType.forAcceptList)
        if slots[tagIndex].lastPeer == peer, now.nanoseconds < slots[tagIndex].recheckAt { return }
        slots[tagIndex].lastPeer = peer
        mark(tagIndex)
    }

    /// The person's state or proofs changed: their tags are re-decided.
    public mutating func personChanged(_ personId: String) {
        guard let indices = tagIndicesByPerson[personId] else { return }
        for index in indices { mark(index) }
    }

    /// Re-decides the tags that changed since the last call; returns what the scheduler
    /// must be told, in the order the tags changed.
    public mutating func update(presence: PresenceEngine, book: ProofBook, now: Instant) -> [Change] {
        guard !pending.isEmpty else { return [] }
        var changes: [Change] = []
        for index in pending {
            tagsVisited &+= 1
            var peer: ConnectPeer?
            if let tag = tags[index], Self.wants(tag, tagIndex: index, presence: presence, book: book, now: now) {
                peer = slots[index].lastPeer ?? tag.configuredPeer
            }
            if let peer, let tag = tags[index] {
                guard wanted[index] != peer else { continue }
                wanted[index] = peer
                changes.append(.want(tagIndex: index, peer: peer, tracked: tag.tracked))
            } else if wanted.removeValue(forKey: index) != nil {
                changes.append(.unwant(tagIndex: index))
            }
        }
        let recheckAt = now.nanoseconds &+ Self.timeConditionsRecheck.nanosecondsClamped
        for index in pending {
            slots[index].isPending = false
            slots[index].recheckAt = recheckAt
        }
        pending.removeAll(keepingCapacity: true)
        return changes
    }

    static func wants(_ tag: Tag, tagIndex: Int, presence: PresenceEngine, book: ProofBook, now: Instant) -> Bool {
        if tag.requireProof, tag.hasKey, presence.wantsProof(tagIndex: tagIndex, at: now), book.mayAttempt(tag: tag.tagId, now: now) {
            return true
        }
        if tag.tracked, let state = presence.state(of: tag.personId), state != .outside {
            return true
        }
        return false
    }

    /// Only tags in `tags` (those have a slot).
    private mutating func mark(_ index: Int) {
        guard !slots[index].isPending else { return }
        slots[index].isPending = true
        pending.append(index)
    }
}
