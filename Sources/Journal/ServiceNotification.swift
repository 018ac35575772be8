import EventLoop

/// One sd_notify(3) state change, as the service manager reads it from NOTIFY_SOCKET.
public enum ServiceNotification: Hashable, Sendable {
    /// Start-up finished: for us, once scanning (see docs/logs-and-systemd.md).
    case ready
    /// A one-line summary shown by `systemctl status` (`scanning · 3 present · outbox 0`).
    case status(String)
    /// Keep-alive; sent only while the controller answers its probe.
    case watchdog
    /// Reloading the configuration (SIGHUP); `CLOCK_MONOTONIC` in µs at that moment,
    /// which systemd ≥ 253 needs to tell this reload from an older one.
    case reloading(monotonicMicroseconds: Int64)
    /// Shutting down (SIGTERM).
    case stopping

    /// The `NAME=value` lines of the datagram.
    public var text: String {
        switch self {
        case .ready: "READY=1"
        case .status(let summary): "STATUS=" + ServiceNotification.oneLine(summary)
        case .watchdog: "WATCHDOG=1"
        case .reloading(let microseconds): "RELOADING=1\nMONOTONIC_USEC=\(max(0, microseconds))"
        case .stopping: "STOPPING=1"
        }
    }

    /// `.reloading` at an `Instant` of `SystemClock`, which is CLOCK_MONOTONIC.
    public static func reloading(at instant: Instant) -> ServiceNotification {
        .reloading(monotonicMicroseconds: instant.nanoseconds / 1000)
    }

    /// A newline would start a new assignment: status text is folded into one line.
    static func oneLine(_ text: String) -> String {
        String(text.map { $0.isNewline ? " " : $0 }.prefix(512))
    }

    /// The summary line of docs/logs-and-systemd.md: `scanning · 3 present · outbox 0`.
    public static func summary(scanning: Bool, present: Int, outbox: Int) -> String {
        "\(scanning ? "scanning" : "not scanning") · \(present) present · outbox \(outbox)"
    }
}
