/// A log line: the driver writes it to the journal as it is.
public struct DoorLogLine: Sendable {
    /// syslog's priorities (the journal's `PRIORITY`).
    public enum Level: Int32, Sendable {
        case error = 3
        case warning = 4
        case notice = 5
        case info = 6
        case debug = 7
    }

    public var level: Level
    public var message: String
    public var fields: KeyValuePairs<String, String>

    public init(_ level: Level, _ message: String, _ fields: KeyValuePairs<String, String> = [:]) {
        self.level = level
        self.message = message
        self.fields = fields
    }
}
