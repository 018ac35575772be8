import AttendanceEvents


/// Why the forwarder could not be set up or could not start a request.
public enum ForwarderError: Error, Hashable, Sendable, CustomStringConvertible {
    case curl(String)
    /// `server.ca_file` could not be read.
    case caFile(path: String, reason: String)
    /// The URL is neither https:// nor http:// to a loopback host (shown without user-info).
    case insecureURL(String)

    public var description: String {
        switch self {
        case let .curl(message): "libcurl: \(message)"
        case let .caFile(path, reason): "server.ca_file \(path): \(reason)"
        case let .insecureURL(url): "server.url \(url): \(ServerURL.plainHTTPRule)"
        }
    }
}
