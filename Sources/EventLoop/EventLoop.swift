#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A single-threaded reactor on poll(2): file descriptors, one-shot timers, signals and
/// descriptor-less "pending" sources, all delivered as callbacks on the thread that calls
/// `run()`.
///
/// Everything above the transports is a sans-IO state machine that takes `Instant`s; this
/// loop is the one place that waits. It is deliberately not `Sendable`: create it, register
/// everything and run it on one thread. Callbacks may register, unregister, schedule,
/// cancel and `stop()` freely, including from inside themselves.
///
/// One turn of the loop: fire due timers, run pending sources that have work, wait in
/// poll(2) (not at all while a pending source has work; otherwise until the next timer or
/// forever), then call back the ready descriptors.
public final class EventLoop {
    /// A registered descriptor or pending source; pass it to `unregister(_:)`.
    public struct Registration: Hashable, Sendable {
        fileprivate let id: UInt64
    }

    /// A scheduled timer; pass it to `cancel(_:)`.
    public struct TimerHandle: Hashable, Sendable {
        fileprivate let id: UInt64
    }

    private struct Descriptor {
        var id: UInt64
        var fileDescriptor: Int32
        var onReadable: () -> Void
        var onWritable: (() -> Void)?
        var readingPaused = false
    }

    private struct PendingSource {
        var id: UInt64
        var hasWork: () -> Bool
        var perform: () -> Void
    }

    /// Where the loop reads the time for its timers, and the one wall clock its users
    /// read (`wallMilliseconds`).
    public let clock: any MonotonicClock
    private let poller: any ReadinessPoller
    private var nextID: UInt64 = 1
    private var descriptors: [Descriptor] = []
    private var pendingSources: [PendingSource] = []
    private var timers = TimerQueue()
    private var stopRequested = false
    public private(set) var isRunning = false
    /// Descriptors poll(2) reported as not open (POLLNVAL): a bug in their owner, who closed
    /// them without unregistering. They are dropped after one last callback.
    public private(set) var invalidDescriptorCount = 0
    var signals = SignalState()

    /// - Parameter clock: must advance by itself (poll waits in real time), so in practice
    ///   `SystemClock`, or one that steps the wall clock for a test; a loop on a clock that
    ///   moves only when told to is a `VirtualEventLoop`.
    public convenience init(clock: any MonotonicClock = SystemClock()) {
        self.init(clock: clock, poller: SystemPoller(clock: clock))
    }

    init(clock: any MonotonicClock, poller: any ReadinessPoller) {
        self.clock = clock
        self.poller = poller
    }

    deinit {
        stopHandlingSignals()
    }

    /// Now, on the loop's clock.
    public var now: Instant { clock.now }

    /// The wall clock in milliseconds since the Unix epoch, from the loop's clock: the one
    /// place loop-bound code reads it, so a test that steps it steps it for everyone.
    public var wallMilliseconds: Int64 { clock.wallMilliseconds }

    private func makeID() -> UInt64 {
        defer { nextID &+= 1 }
        return nextID
    }

    // MARK: Descriptors

    /// Calls `onReadable` whenever `fileDescriptor` is readable, has hung up or has an
    /// error pending (the callback's read then reports which). The loop never closes it.
    public func register(fileDescriptor: Int32, onReadable: @escaping () -> Void) -> Registration {
        let id = makeID()
        descriptors.append(Descriptor(id: id, fileDescriptor: fileDescriptor, onReadable: onReadable, onWritable: nil))
        return Registration(id: id)
    }

    /// Asks for (or, with `nil`, stops asking for) a callback when the descriptor can take
    /// more output: for writers whose last write stopped at EAGAIN.
    public func setWritableCallback(_ registration: Registration, _ onWritable: (() -> Void)?) {
        guard let index = descriptors.firstIndex(where: { $0.id == registration.id }) else { return }
        descriptors[index].onWritable = onWritable
    }

    /// Stops (or resumes) asking whether the descriptor is readable: for a reader that
    /// lets input gather before its next read. A hang-up or error is still reported.
    public func setReadingPaused(_ registration: Registration, _ paused: Bool) {
        guard let index = descriptors.firstIndex(where: { $0.id == registration.id }) else { return }
        descriptors[index].readingPaused = paused
    }

    // MARK: Pending sources

    /// A source without a descriptor that can say "I have more to give" — a file being
    /// replayed, a queue filled by another part of the program.
    ///
    /// Before every wait the loop asks `hasWork`; while any source answers `true` the loop
    /// does not block, and it calls `perform` once per turn (interleaved with timers and
    /// descriptors, so a busy source cannot starve them). When `hasWork` is `false` the
    /// source costs nothing until it is asked again on the next turn.
    public func registerPendingSource(hasWork: @escaping () -> Bool, perform: @escaping () -> Void) -> Registration {
        let id = makeID()
        pendingSources.append(PendingSource(id: id, hasWork: hasWork, perform: perform))
        return Registration(id: id)
    }

    /// Forgets a descriptor or pending source. Unregistering twice is harmless.
    public func unregister(_ registration: Registration) {
        descriptors.removeAll { $0.id == registration.id }
        pendingSources.removeAll { $0.id == registration.id }
    }

    // MARK: Timers

    /// Calls `callback` once, on the first turn of the loop at or after `deadline`.
    @discardableResult
    public func schedule(at deadline: Instant, _ callback: @escaping () -> Void) -> TimerHandle {
        let id = makeID()
        timers.insert(id: id, deadline: deadline, callback: callback)
        return TimerHandle(id: id)
    }

    @discardableResult
    public func schedule(after delay: Duration, _ callback: @escaping () -> Void) -> TimerHandle {
        schedule(at: clock.now + delay, callback)
    }

    /// Disarms a timer. Returns `false` if it already fired or was cancelled.
    @discardableResult
    public func cancel(_ timer: TimerHandle) -> Bool {
        timers.cancel(id: timer.id)
    }

    public func isScheduled(_ timer: TimerHandle) -> Bool { timers.contains(id: timer.id) }

    /// Timers currently armed.
    public var scheduledTimerCount: Int { timers.count }

    // MARK: Running

    /// Makes `run()` return after the callback that is running now; called before the
    /// loop runs (a start-up step that failed), the next `run()` returns at once.
    public func stop() {
        stopRequested = true
    }

    /// Runs until `stop()` is called, or until nothing is registered that could ever
    /// produce another callback (no descriptors, no timers, no pending source with work).
    public func run() throws(EventLoopError) {
        try running { () throws(EventLoopError) in
            while !stopRequested {
                guard try turn(mayWait: true) != nil else { break }
            }
        }
    }

    /// One turn: due timers, pending sources, then the descriptors (waiting for them only
    /// when `mayWait` and no source has work). Returns how many descriptors were ready, or
    /// `nil` when nothing is registered that could ever produce another callback.
    func turn(mayWait: Bool) throws(EventLoopError) -> Int? {
        fireDueTimers()
        if stopRequested { return 0 }
        performPendingSources()
        if stopRequested { return 0 }

        let sourcesHaveWork = pendingSources.contains { $0.hasWork() }
        let nextDeadline = timers.nextDeadline()
        if descriptors.isEmpty && nextDeadline == nil && !sourcesHaveWork { return nil }

        let wait: PollWait = sourcesHaveWork || !mayWait ? .none : nextDeadline.map { .until($0) } ?? .forever
        return try waitAndDispatch(wait)
    }

    /// Whether a turn at the loop's current time would do something without waiting: a
    /// timer is due or a pending source has work. (Ready descriptors are the poller's to say.)
    var hasWorkNow: Bool {
        if let next = timers.nextDeadline(), next <= clock.now { return true }
        return pendingSources.contains { $0.hasWork() }
    }

    /// The earliest deadline of an armed timer.
    var nextTimerDeadline: Instant? { timers.nextDeadline() }

    /// Marks the loop as running for a driver other than `run()` (the virtual loop's
    /// `advance`), so a callback's `run()` is refused there too.
    func running(_ body: () throws(EventLoopError) -> Void) throws(EventLoopError) {
        guard !isRunning else { throw .alreadyRunning }
        isRunning = true
        // A stop asked for before this run applies to it: cleared when the run ends, not
        // when it starts.
        defer {
            isRunning = false
            stopRequested = false
        }
        try body()
    }

    /// Whether a callback asked the loop to stop during this run.
    var isStopRequested: Bool { stopRequested }

    /// Milliseconds to wait for `deadline`, rounded up so a timer never fires early
    /// (which would only cost another turn at 0 ms), clamped to what poll(2) accepts.
    public static func pollTimeout(until deadline: Instant?, now: Instant) -> Int32 {
        guard let deadline else { return -1 }
        let remaining = deadline.nanoseconds.subtractingReportingOverflow(now.nanoseconds)
        if remaining.overflow { return deadline > now ? Int32.max : 0 }
        guard remaining.partialValue > 0 else { return 0 }
        let milliseconds = remaining.partialValue / 1_000_000 + (remaining.partialValue % 1_000_000 == 0 ? 0 : 1)
        return Int32(clamping: milliseconds)
    }

    private func fireDueTimers() {
        let now = clock.now
        // A callback may schedule another timer that is already due; those wait for the
        // next turn, so a timer re-arming itself at `now` cannot starve the descriptors.
        var budget = timers.count
        while budget > 0, !stopRequested, let callback = timers.popDue(now: now) {
            budget -= 1
            callback()
        }
    }

    private func performPendingSources() {
        for source in pendingSources {
            if stopRequested { return }
            // It may have been unregistered by an earlier callback of this turn.
            guard pendingSources.contains(where: { $0.id == source.id }), source.hasWork() else { continue }
            source.perform()
        }
    }

    private func waitAndDispatch(_ wait: PollWait) throws(EventLoopError) -> Int {
        var pollDescriptors = descriptors.map { descriptor in
            var events = descriptor.readingPaused ? Int16(0) : Int16(POLLIN)
            if descriptor.onWritable != nil { events |= Int16(POLLOUT) }
            return pollfd(fd: descriptor.fileDescriptor, events: events, revents: 0)
        }
        let ids = descriptors.map(\.id)
        let ready = try poller.wait(&pollDescriptors, wait)
        guard ready > 0 else { return 0 }
        for (index, result) in pollDescriptors.enumerated() where result.revents != 0 {
            if stopRequested { return ready }
            let id = ids[index]
            // Earlier callbacks of this turn may have unregistered it.
            guard let descriptor = descriptors.first(where: { $0.id == id }) else { continue }
            let revents = Int32(result.revents)
            if revents & Int32(POLLNVAL) != 0 {
                invalidDescriptorCount += 1
                descriptors.removeAll { $0.id == id }
                descriptor.onReadable()
                continue
            }
            if revents & Int32(POLLIN | POLLHUP | POLLERR) != 0 {
                descriptor.onReadable()
            }
            if revents & Int32(POLLOUT) != 0,
               let onWritable = descriptors.first(where: { $0.id == id })?.onWritable {
                onWritable()
            }
        }
        return ready
    }
}
