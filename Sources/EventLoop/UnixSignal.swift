#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A POSIX signal number the loop can turn into a callback.
///
/// A thin wrapper so call sites read `.terminate` rather than a bare 15; any signal
/// number is still representable.
public struct UnixSignal: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// SIGINT: Ctrl-C in a terminal.
    public static let interrupt = UnixSignal(rawValue: SIGINT)
    /// SIGTERM: `systemctl stop`.
    public static let terminate = UnixSignal(rawValue: SIGTERM)
    /// SIGHUP: `systemctl reload` — re-read the configuration.
    public static let hangup = UnixSignal(rawValue: SIGHUP)

    public var description: String {
        switch self {
        case .interrupt: "SIGINT"
        case .terminate: "SIGTERM"
        case .hangup: "SIGHUP"
        default: "signal \(rawValue)"
        }
    }
}
