import EventLoop
import Store
import XCTest
@testable import Forwarder
#if canImport(Glibc)
import Glibc
#endif

/// A fresh state directory per test, a store with events in it, and a loop run until a
/// condition holds.
class ForwarderTestCase: XCTestCase {
    var directory = ""

    override func setUpWithError() throws {
        var template = Array("/tmp/forwarder-test-XXXXXX".utf8CString)
        XCTAssertNotNil(template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) })
        directory = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    override func tearDownWithError() throws {
        for name in ["gateway.sqlite", "gateway.sqlite-wal", "gateway.sqlite-shm"] { unlink(directory + "/" + name) }
        rmdir(directory)
    }

    func makeStore(events: [(key: String, person: String)], configuration: StoreConfiguration = .init()) throws -> Store {
        let store = try Store(path: Store.path(stateDirectory: directory), configuration: configuration)
        for event in events {
            try store.commit { (transaction: inout StoreTransaction) throws(StoreError) in
                _ = try transaction.appendEvent(idempotencyKey: event.key, type: "checkin", personId: event.person, createdAtMillis: 0) { sequence in
                    Array("{\"sequence\": \(sequence), \"person\": \"\(event.person)\"}".utf8)
                }
            }
        }
        return store
    }

    /// Runs the loop until `done` says so (checked every 20 ms), at most `limit`; returns
    /// whether `done` said so (and fails the test if not).
    @discardableResult
    func run(_ loop: EventLoop, limit: Duration = .seconds(20), until done: @escaping () -> Bool) -> Bool {
        var timedOut = false
        func check() {
            loop.schedule(after: .milliseconds(20)) {
                if done() { loop.stop() } else { check() }
            }
        }
        check()
        loop.schedule(after: limit) { timedOut = true; loop.stop() }
        XCTAssertNoThrow(try loop.run())
        XCTAssertFalse(timedOut, "the loop ran into its time limit")
        return !timedOut
    }
}
