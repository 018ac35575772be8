import Config
import Journal
import XCTest
@testable import Agent

/// The one way through the drivers' lifecycle: start, reload and the log level in the
/// list's order, stop and close in reverse, each driver started and stopped once, one
/// built while the door runs started with the next start, one the door no longer has
/// stopped at once.
final class DriverLifecycleTests: XCTestCase {
    /// A driver that writes down what it is told.
    private final class Recording: AgentDriver {
        let name: String
        let journal: Journal
        var log = LogSink(minimumLevel: .info, destination: .terminal)

        final class Journal {
            var lines: [String] = []
        }

        init(_ name: String, _ journal: Journal) {
            self.name = name
            self.journal = journal
        }

        func start(_ configuration: GatewayConfiguration) { journal.lines.append("start \(name) \(configuration.gateway.id)") }
        func reload(_ configuration: GatewayConfiguration, previous: GatewayConfiguration) {
            journal.lines.append("reload \(name) \(previous.gateway.id)→\(configuration.gateway.id)")
        }
        func stop() { journal.lines.append("stop \(name)") }
        func close() { journal.lines.append("close \(name)") }
    }

    private let journal = Recording.Journal()

    private func configuration(_ id: String) -> GatewayConfiguration {
        GatewayConfiguration(gateway: .init(id: id, stateDirectory: "/nonexistent"))
    }

    func testStartReloadAndLogLevelFollowTheListAndTheStopAndCloseGoInReverse() {
        let lifecycle = DriverLifecycle()
        let drivers = ["store", "delivery", "controller"].map { Recording($0, journal) }
        lifecycle.start(drivers, configuration("one"))
        lifecycle.reload(drivers, configuration("two"), previous: configuration("one"))
        lifecycle.setLogLevel(drivers, .debug)
        lifecycle.stop(drivers)
        lifecycle.close(drivers)
        XCTAssertEqual(journal.lines, [
            "start store one", "start delivery one", "start controller one",
            "reload store one→two", "reload delivery one→two", "reload controller one→two",
            "stop controller", "stop delivery", "stop store",
            "close controller", "close delivery", "close store",
        ])
        XCTAssertEqual(drivers.map(\.log.minimumLevel), [.debug, .debug, .debug])
        XCTAssertEqual(drivers.map { lifecycle.phase(of: $0) }, [.closed, .closed, .closed])
    }

    func testADriverBuiltWhileTheDoorRunsIsStartedOnceAndStoppedWithTheOthers() {
        let lifecycle = DriverLifecycle()
        let store = Recording("store", journal)
        let controller = Recording("controller", journal)
        lifecycle.start([store], configuration("one"))
        lifecycle.start([store, controller], configuration("one"))
        lifecycle.start([store, controller], configuration("one"))
        XCTAssertEqual(journal.lines, ["start store one", "start controller one"], "each started once")

        let enrolment = Recording("enrolment", journal)
        lifecycle.start([store, controller, enrolment], configuration("two"))
        lifecycle.stop([store, controller, enrolment])
        lifecycle.stop([store, controller, enrolment])
        XCTAssertEqual(Array(journal.lines.dropFirst(2)), ["start enrolment two", "stop enrolment", "stop controller", "stop store"],
                       "stopped once, the last built first")
    }

    func testADriverBuiltButNeverStartedIsStoppedAndClosedToo() {
        let lifecycle = DriverLifecycle()
        let store = Recording("store", journal)
        let controller = Recording("controller", journal)
        // A start cut short after the store: the controller was built, never started.
        lifecycle.start([store], configuration("one"))
        lifecycle.stop([store, controller])
        lifecycle.close([store, controller])
        XCTAssertEqual(journal.lines, ["start store one", "stop controller", "stop store", "close controller", "close store"])
    }

    func testARetiredDriverIsStoppedAndClosedAtOnceAndForgotten() {
        let lifecycle = DriverLifecycle()
        let store = Recording("store", journal)
        let roster = Recording("roster", journal)
        lifecycle.start([store, roster], configuration("one"))
        lifecycle.retire(roster)
        XCTAssertEqual(lifecycle.phase(of: roster), .built)
        lifecycle.stop([store])
        XCTAssertEqual(journal.lines, ["start store one", "start roster one", "stop roster", "close roster", "stop store"])
    }
}
