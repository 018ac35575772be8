/// The one loop timer of a sans-IO machine that says when it next needs the time
/// (`nextDeadline`): re-armed only when that deadline changed, since most inputs leave it
/// where it was and cancelling and scheduling on each would churn the timer queue.
public final class DeadlineTimer {
    private let loop: EventLoop
    private let fire: () -> Void
    private var handle: EventLoop.TimerHandle?
    /// The deadline armed for (or asked for while nothing was to be armed).
    private var deadline: Instant?

    /// - Parameter fire: runs at the deadline; the timer counts as unarmed again by then,
    ///   so it may re-arm it. Given once, so arming on a hot path allocates nothing.
    public init(loop: EventLoop, fire: @escaping () -> Void) {
        self.loop = loop
        self.fire = fire
    }

    /// Arms the timer at `newDeadline`, replacing the one armed before; `nil` disarms.
    public func arm(at newDeadline: Instant?) {
        guard newDeadline != deadline else { return }
        cancel()
        deadline = newDeadline
        guard let newDeadline else { return }
        handle = loop.schedule(at: newDeadline) { [unowned self] in
            self.handle = nil
            self.deadline = nil
            self.fire()
        }
    }

    public func cancel() {
        if let handle { _ = loop.cancel(handle) }
        handle = nil
        deadline = nil
    }
}
