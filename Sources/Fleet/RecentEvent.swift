/// One committed event, as `status` lists the last ones.
public struct RecentEvent: Hashable, Sendable {
    public var sequence: Int64
    public var type: String
    public var personId: String
    public var atMillis: Int64

    public init(sequence: Int64, type: String, personId: String, atMillis: Int64) {
        self.sequence = sequence
        self.type = type
        self.personId = personId
        self.atMillis = atMillis
    }
}
