/// Where an event is in its delivery. Raw values are what the database holds.
public struct OutboxState: RawRepresentable, Hashable, Sendable, CustomStringConvertible, CaseIterable {
    public var rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// Committed, not yet accepted by the server: will be sent (again).
    public static let pending = OutboxState(rawValue: 0)
    /// The server answered 201 or 200.
    public static let sent = OutboxState(rawValue: 1)
    /// The server refused it by policy (409): kept for the record, never retried.
    public static let rejected = OutboxState(rawValue: 2)
    /// Another 4xx: a dead letter, kept until `outbox retry-dead`.
    public static let dead = OutboxState(rawValue: 3)

    public static let allCases: [OutboxState] = [.pending, .sent, .rejected, .dead]

    public init?(name: String) {
        guard let state = Self.allCases.first(where: { $0.description == name }) else { return nil }
        self = state
    }

    public var description: String {
        switch self {
        case .pending: "pending"
        case .sent: "sent"
        case .rejected: "rejected"
        case .dead: "dead"
        default: "state-\(rawValue)"
        }
    }
}
