/// An `EventLoop` on virtual time, for tests of loop-bound code: its clock is a
/// `ManualClock` that moves only in `advance(by:)`/`advance(to:)`, and its descriptors
/// are asked for readiness without ever waiting (`ScriptedPoller`). So a test of a
/// five-minute backoff takes microseconds and never sleeps, and what happens is a
/// function of the script alone.
///
/// Hand `loop` to the code under test as it is (it is an ordinary `EventLoop`), then
/// drive time from the test:
///
///     let virtual = VirtualEventLoop()
///     let forwarder = try Forwarder(store: store, loop: virtual.loop, …)
///     forwarder.start()
///     try virtual.advance(by: .seconds(30))
///
/// `advance` runs every timer due inside the window in deadline order (scheduling order
/// for equal deadlines), with the clock set to each timer's deadline while it runs;
/// timers scheduled while advancing that fall inside the window run too. At every
/// instant it stops at, it turns the loop until nothing is left to do then: due timers,
/// pending sources with work, ready descriptors. A callback calling `loop.stop()` ends
/// the advance at that instant.
///
/// `loop.run()` works too: instead of waiting in poll(2) it moves the clock to the next
/// timer. It must not wait forever (nothing ready and no timer armed): that is a test
/// that would hang, and it stops with a precondition failure instead.
public final class VirtualEventLoop {
    public let clock: ManualClock
    public let loop: EventLoop
    let poller: ScriptedPoller

    /// More turns than this at one instant means something is always ready (a descriptor
    /// its callback never drains, a pending source that always has work): a bug to report,
    /// not a reason to hang the test.
    public var maximumTurnsPerInstant = 100_000

    public init(clock: ManualClock = ManualClock()) {
        self.clock = clock
        poller = ScriptedPoller(clock: clock)
        loop = EventLoop(clock: clock, poller: poller)
    }

    public var now: Instant { clock.now }

    /// Runs what is due now, without moving the clock.
    public func runReady() throws(EventLoopError) {
        try loop.running { () throws(EventLoopError) in try settle() }
    }

    /// Moves the clock forward by `duration`, running everything that comes due on the way.
    public func advance(by duration: Duration) throws(EventLoopError) {
        try advance(to: clock.now + duration)
    }

    /// Moves the clock to `target` (not back: a monotonic clock never goes back), running
    /// everything that comes due on the way.
    public func advance(to target: Instant) throws(EventLoopError) {
        precondition(target >= clock.now, "virtual time never goes back (now \(clock.now), asked for \(target))")
        try loop.running { () throws(EventLoopError) in
            try settle()
            while !loop.isStopRequested, let next = loop.nextTimerDeadline, next <= target {
                if next > clock.now { clock.advance(to: next) }
                try settle()
            }
            if loop.isStopRequested { return }
            clock.advance(to: target)
            try settle()
        }
    }

    /// A descriptor the loop watches, with the test at the other end; see `ScriptedDescriptor`.
    public func makeDescriptor() throws(EventLoopError) -> ScriptedDescriptor {
        try ScriptedDescriptor(poller: poller)
    }

    /// Turns the loop at the current instant until nothing is due, no source has work and
    /// no descriptor is ready.
    private func settle() throws(EventLoopError) {
        var turns = 0
        while !loop.isStopRequested {
            guard let ready = try loop.turn(mayWait: false) else { return }
            guard ready > 0 || loop.hasWorkNow else { return }
            turns += 1
            precondition(turns < maximumTurnsPerInstant,
                         "the loop never settles at \(clock.now): a descriptor stays ready or a pending source always has work")
        }
    }
}
