/// Where the persons in force come from, for the heartbeat and `status`.
public struct RosterStatus: Hashable, Sendable {
    /// `file` when no server roster is in use, else `server`.
    public var source: String
    /// The server roster's revision in force; nil for the file.
    public var revision: String?
    /// Persons in force from that source.
    public var persons: Int
    /// The last invalid roster's error, until a valid one arrives.
    public var error: String?

    public init(source: String, revision: String? = nil, persons: Int, error: String? = nil) {
        self.source = source
        self.revision = revision
        self.persons = persons
        self.error = error
    }

    public static func file(persons: Int) -> RosterStatus {
        RosterStatus(source: "file", persons: persons)
    }
}
