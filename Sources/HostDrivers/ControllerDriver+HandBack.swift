import Journal

extension ControllerDriver {
    /// The longest an exit waits for the transport's close: for `hciN` the kernel resets
    /// the controller on close, ~2 s when it is dead; well inside systemd's 5 s for a
    /// clean stop.
    public static let handBackTimeout: Duration = .seconds(3)

    /// At exit, after `stop()`: blocks until the transport's close has finished (for
    /// `hciN`, the kernel has the adapter back), at most `handBackTimeout`, and says so
    /// when it did not.
    public func waitForHandBack(log: LogSink) {
        guard !waitUntilClosed(timeout: Self.handBackTimeout) else { return }
        log.log(.warning, "controller not handed back in time", [
            "transport": transport.name,
            "waited_ms": "\(Self.handBackTimeout.nanosecondsClamped / 1_000_000)",
        ])
    }
}
