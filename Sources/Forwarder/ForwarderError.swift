/// Why the forwarder could not be set up or could not start a request.
public enum ForwarderError: Error, Hashable, Sendable, CustomStringConvertible {
    case curl(String)
    /// `server.ca_file` could not be read.
    case caFile(path: String, reason: String)

    public var description: String {
        switch self {
        case let .curl(message): "libcurl: \(message)"
        case let .caFile(path, reason): "server.ca_file \(path): \(reason)"
        }
    }
}
