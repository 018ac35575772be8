#if canImport(Glibc)
import Glibc
#endif

/// sd_notify(3) without libsystemd: datagrams to the AF_UNIX socket named by
/// NOTIFY_SOCKET (a path, or `@name` for the abstract namespace).
///
/// Sending never blocks and never throws at the caller's feet in normal use: a lost
/// notification is counted by the caller if it cares (`notify` reports it), and systemd
/// itself notices a missing READY or WATCHDOG.
public final class SystemdNotifier: Sendable {
    private let sender: UnixDatagramSender
    /// The socket address as NOTIFY_SOCKET gave it.
    public var socketAddress: String { sender.address }

    public init(socketAddress: String) throws(DatagramError) {
        sender = try UnixDatagramSender(address: socketAddress)
    }

    /// The notifier for NOTIFY_SOCKET, or `nil` when not started by systemd with
    /// `Type=notify` (or the variable is unusable).
    public static func fromEnvironment() -> SystemdNotifier? {
        guard let address = environment("NOTIFY_SOCKET"), !address.isEmpty else { return nil }
        return try? SystemdNotifier(socketAddress: address)
    }

    /// Sends the notifications in one datagram, so systemd applies them together.
    public func notify(_ notifications: ServiceNotification...) throws(DatagramError) {
        try notify(notifications)
    }

    public func notify(_ notifications: [ServiceNotification]) throws(DatagramError) {
        guard !notifications.isEmpty else { return }
        let text = notifications.map(\.text).joined(separator: "\n")
        try sender.send(Array(text.utf8))
    }

    /// WATCHDOG_USEC when WATCHDOG_PID is unset or is us (systemd sets it for the main
    /// process; a child must not feed in its parent's name).
    public static func watchdogInterval() -> Duration? {
        watchdogInterval(microseconds: environment("WATCHDOG_USEC"), pid: environment("WATCHDOG_PID"), ownPID: Int64(getpid()))
    }

    /// The parsing behind `watchdogInterval()`, for tests: `nil` for missing, zero,
    /// malformed values or another process's PID.
    public static func watchdogInterval(microseconds: String?, pid: String?, ownPID: Int64) -> Duration? {
        guard let microseconds, let value = Int64(microseconds), value > 0 else { return nil }
        if let pid {
            guard let target = Int64(pid), target == ownPID else { return nil }
        }
        return .microseconds(value)
    }

    static func environment(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }
}
