import PresenceProof

/// Which sighting reports a door takes (docs/neighbours.md, "What a door refuses"): well
/// formed, from a door in its `neighbours`, made within 3 s of its own clock, and signed
/// with the site's key. The cheap checks come first, so a flood of junk costs no HMAC.
/// Whether a report is newer than the last one of its sender (a replay) is the
/// neighbour table's to say (`NeighbourTable.accept`).
public struct SightingVerifier: Sendable {
    public var keys: SightingKeys
    public var ownId: String
    public var neighbours: NeighbourList

    /// A report older than this, or this far ahead of this door's clock, is refused.
    public static let maximumAgeMilliseconds: Int64 = 3000

    public init(keys: SightingKeys, ownId: String, neighbours: NeighbourList) {
        self.keys = keys
        self.ownId = ownId
        self.neighbours = neighbours
    }

    /// The report in `payload`, or why it is refused. `wallNow`: this door's wall clock
    /// (ms since the Unix epoch) as the payload arrived.
    public func verify(_ payload: [UInt8], wallNow: Int64) -> Result<SightingReport, SightingRefusal> {
        guard let (report, bodyEnd) = SightingReport.parse(payload) else { return .failure(.malformed) }
        if report.sender == ownId { return .failure(.ownReport) }
        guard neighbours.contains(report.sender) else { return .failure(.notANeighbour) }
        let age = wallNow &- report.wallMilliseconds
        if age > Self.maximumAgeMilliseconds { return .failure(.stale) }
        if age < -Self.maximumAgeMilliseconds { return .failure(.ahead) }
        guard Self.signatureMatches(keys.signature(of: payload[..<bodyEnd]), payload, from: bodyEnd) else {
            return .failure(.forged)
        }
        return .success(report)
    }

    /// The signature at `start` compared with `expected` in constant time (docs/security.md).
    /// Concrete types: PresenceProof's generic `constantTimeEqual`, unspecialised across the
    /// module boundary, cost a flood of forged reports more than their HMAC
    /// (docs/neighbours.md, "Cost").
    static func signatureMatches(_ expected: [UInt8], _ payload: [UInt8], from start: Int) -> Bool {
        guard start >= 0, payload.count - start == expected.count else { return false }
        var difference: UInt8 = 0
        for index in expected.indices { difference |= expected[index] ^ payload[start + index] }
        return difference == 0
    }
}

/// Why a sighting report was not taken; each is counted (`DoorCore.SightingCounters`).
public enum SightingRefusal: String, Error, Hashable, Sendable, CaseIterable {
    /// Not a sighting report: cut short, too long, a wrong magic or version, bad UTF-8.
    case malformed
    /// This door's own report, back from the bus (not hostile; counted apart).
    case ownReport = "own"
    /// From a door not in `neighbours`.
    case notANeighbour = "not_neighbour"
    /// Made more than 3 s before this door's clock (late, or replayed later).
    case stale
    /// Made more than 3 s after this door's clock (a clock far off, or a forgery).
    case ahead
    /// Unsigned, or signed with another key, or altered after signing.
    case forged
    /// Not newer than the last report taken from its sender (a replay within 3 s).
    case replayed
    /// From yet another door under `"*"`, with `NeighbourTable.maximumNeighbours` known.
    case tooManyNeighbours = "too_many_neighbours"
}

/// The `[site] neighbours` setting: gateway ids, or every door of the site (`"*"`).
public enum NeighbourList: Hashable, Sendable {
    case doors([String])
    case anyDoorOfSite

    public func contains(_ gatewayId: String) -> Bool {
        switch self {
        case let .doors(ids): ids.contains(gatewayId)
        case .anyDoorOfSite: true
        }
    }
}
