/// When each person was last heard, for persons whose saved `PersistedPresence` is older
/// than that: one small record the agent rewrites at its checkpoints instead of one
/// record per person (docs/reliability.md).
///
/// Why: at a quiet door the only thing that changes for hours is "last heard". Saving
/// each present person's record rewrites a database page per person (the records are
/// spread over the table by id); this digest is one page for a door's worth of people.
/// On restore each person's record takes the later of its own last sample and the
/// digest's: both are times the person really was heard, so the later one is the truth.
public struct LastHeardDigest: Hashable, Sendable {
    /// Person id → wall-clock milliseconds of the last sample.
    public var lastHeard: [String: Int64]

    /// The key the digest is stored under beside the persons' records: not a valid
    /// person id (those are letters, digits and `._-:@`), so it never collides.
    public static let storageKey = "#last-heard"

    static let magic: [UInt8] = [0x42, 0x47, 0x4C, 0x48]
    static let version: UInt8 = 1

    public init(lastHeard: [String: Int64] = [:]) {
        self.lastHeard = lastHeard
    }

    public func encode() -> [UInt8] {
        var bytes = Self.magic
        bytes.append(Self.version)
        for (personId, wall) in lastHeard.sorted(by: { $0.key < $1.key }) {
            let utf8 = Array(personId.utf8.prefix(PersistedPresence.maximumIdLength))
            bytes += [UInt8(truncatingIfNeeded: utf8.count), UInt8(truncatingIfNeeded: utf8.count >> 8)]
            bytes += utf8
            let raw = UInt64(bitPattern: wall)
            for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: raw >> UInt64(shift))) }
        }
        return bytes
    }

    public init?(decoding bytes: [UInt8]) {
        guard bytes.count >= 5, Array(bytes[0 ..< 4]) == Self.magic, bytes[4] == Self.version else { return nil }
        var offset = 5
        var lastHeard: [String: Int64] = [:]
        while offset < bytes.count {
            guard offset + 2 <= bytes.count else { return nil }
            let length = Int(bytes[offset]) | Int(bytes[offset + 1]) << 8
            offset += 2
            guard length <= PersistedPresence.maximumIdLength, offset + length + 8 <= bytes.count else { return nil }
            let personId = String(decoding: bytes[offset ..< offset + length], as: UTF8.self)
            offset += length
            var raw: UInt64 = 0
            for i in 0 ..< 8 { raw |= UInt64(bytes[offset + i]) << UInt64(8 * i) }
            offset += 8
            lastHeard[personId] = Int64(bitPattern: raw)
        }
        self.lastHeard = lastHeard
    }

    /// `record` with the later of its own last sample and the digest's.
    public func applied(to record: PersistedPresence) -> PersistedPresence {
        guard let heard = lastHeard[record.personId] else { return record }
        var updated = record
        updated.lastSampleWallMilliseconds = max(record.lastSampleWallMilliseconds ?? heard, heard)
        return updated
    }
}
