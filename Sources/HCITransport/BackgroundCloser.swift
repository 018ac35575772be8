#if canImport(Glibc)
import Glibc
#endif
import EventLoop

/// Closes descriptors off the caller's thread, for descriptors whose close(2) can block.
///
/// Closing an `hciN` user channel makes the kernel send the controller its own HCI Reset
/// and wait for the answer: about 2 s when the controller is dead, which is exactly when
/// the agent closes it to recover. Everything else runs on one event loop (LEDs, watchdog,
/// forwarder), so the loop must not be the thread that waits.
///
/// Each close runs on a detached thread of its own (closes are rare: recoveries and
/// exit) under a key, the adapter's name, which counts as closing until close(2) has
/// returned. Binding the same user channel again before then fails (EBUSY/EUSERS), so the
/// next open asks `isClosing` first. Thread-safe.
public final class BackgroundCloser: @unchecked Sendable {
    /// The one every user-channel transport shares: two transports on one adapter must
    /// see each other's closes.
    public static let shared = BackgroundCloser()

    private let closeDescriptor: @Sendable (Int32) -> Void
    // Guards `closing`; `finished` is signalled whenever a close returns.
    private let lock = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let finished = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    /// Closes under way per key.
    private var closing: [String: Int] = [:]

    /// - Parameter closeDescriptor: close(2) unless a test stands in a slow one.
    init(closeDescriptor: @escaping @Sendable (Int32) -> Void = { _ = Glibc.close($0) }) {
        self.closeDescriptor = closeDescriptor
        pthread_mutex_init(lock, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        // Timed waits against the monotonic clock, like the event loop's: a wall-clock
        // step during shutdown must not stretch or cut the bound.
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(finished, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        // Only a test's closer ever goes away, and each close thread holds a reference to
        // its closer: nothing is closing any more by now.
        pthread_cond_destroy(finished)
        pthread_mutex_destroy(lock)
        finished.deallocate()
        lock.deallocate()
    }

    /// Hands `fileDescriptor` over to be closed and returns at once; `key` counts as
    /// closing until it is closed. The caller must not use the descriptor any more.
    ///
    /// When no thread can be started (out of resources), closes here, blocking: the
    /// descriptor must go back either way.
    public func close(_ fileDescriptor: Int32, key: String) {
        withLock { closing[key, default: 0] += 1 }
        let job = Unmanaged.passRetained(CloseJob(closer: self, fileDescriptor: fileDescriptor, key: key))
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        var thread = pthread_t()
        let started = pthread_create(&thread, &attributes, { context in
            Unmanaged<CloseJob>.fromOpaque(context!).takeRetainedValue().run()
            return nil
        }, job.toOpaque())
        pthread_attr_destroy(&attributes)
        if started != 0 { job.takeRetainedValue().run() }
    }

    /// `true` while a close under `key` has not returned yet.
    public func isClosing(_ key: String) -> Bool {
        withLock { closing[key, default: 0] > 0 }
    }

    /// Blocks until every close under `key` has returned, or `timeout` has passed. For
    /// process exit, after the loop stopped: the adapter must be back with the kernel
    /// before the process goes. `false` when the closes were still under way at the end.
    public func waitUntilClosed(_ key: String, timeout: Duration) -> Bool {
        var deadline = timespec()
        clock_gettime(CLOCK_MONOTONIC, &deadline)
        let end = Int64(deadline.tv_sec) * 1_000_000_000 + Int64(deadline.tv_nsec) + max(0, timeout.nanosecondsClamped)
        deadline.tv_sec = Int(end / 1_000_000_000)
        deadline.tv_nsec = Int(end % 1_000_000_000)
        pthread_mutex_lock(lock)
        defer { pthread_mutex_unlock(lock) }
        while closing[key, default: 0] > 0 {
            if pthread_cond_timedwait(finished, lock, &deadline) == ETIMEDOUT {
                return closing[key, default: 0] == 0
            }
        }
        return true
    }

    fileprivate func finish(_ fileDescriptor: Int32, key: String) {
        closeDescriptor(fileDescriptor)
        withLock {
            closing[key, default: 1] -= 1
            if closing[key] == 0 { closing[key] = nil }
        }
        pthread_cond_broadcast(finished)
    }

    private func withLock<Result>(_ body: () -> Result) -> Result {
        pthread_mutex_lock(lock)
        defer { pthread_mutex_unlock(lock) }
        return body()
    }
}

/// What one close thread needs, passed through pthread_create's context pointer.
private final class CloseJob {
    let closer: BackgroundCloser
    let fileDescriptor: Int32
    let key: String

    init(closer: BackgroundCloser, fileDescriptor: Int32, key: String) {
        self.closer = closer
        self.fileDescriptor = fileDescriptor
        self.key = key
    }

    func run() { closer.finish(fileDescriptor, key: key) }
}
