import EventLoop
import HCI
import HCITransport
import Host
import ControllerFixtures
import XCTest
@testable import HostDrivers

/// Every command submitted through the link ends in exactly one call of its completion.
/// On virtual time: the host's own command timeout and recovery backoff hold, and the
/// tests that wait for them take no real time.
final class ControllerDriverCommandTests: XCTestCase {
    private var virtual: VirtualEventLoop!
    private var loop: EventLoop { virtual.loop }
    private var transport: AnsweringTransport!
    private var link: ControllerDriver!
    private var states: [HostState] = []
    /// Stops the loop at the next `.scanning`.
    private var stopWhenScanning = false

    override func setUp() {
        virtual = VirtualEventLoop()
        transport = AnsweringTransport()
        link = ControllerDriver(loop: loop, transport: transport, configuration: HostConfiguration(), isPermanent: { _ in false })
        states = []
        link.onStateChanged = { [unowned self] state in
            self.states.append(state)
            if state.isScanning, self.stopWhenScanning { self.loop.stop() }
        }
    }

    override func tearDown() {
        link.stop()
        link = nil
        transport = nil
        virtual = nil
    }

    /// Runs the loop (on virtual time: it jumps from timer to timer) until something stops
    /// it; a bound for a broken link, not a synchronisation (the test fails if it is what
    /// stopped the loop).
    private func runLoop(file: StaticString = #filePath, line: UInt = #line) throws {
        var bounded = false
        let bound = loop.schedule(after: .seconds(30)) { [unowned self] in
            bounded = true
            self.loop.stop()
        }
        try loop.run()
        loop.cancel(bound)
        XCTAssertFalse(bounded, "the loop ran into its bound", file: file, line: line)
    }

    private func startScanning() throws {
        stopWhenScanning = true
        link.start()
        try runLoop()
        stopWhenScanning = false
        XCTAssertTrue(link.host.isControllerAnswering, "\(states)")
    }

    /// Submits, and runs the loop until the completion has been called.
    private func finish<Command: HCICommand>(_ command: Command, recoverOnTimeout: Bool = true) throws -> [HostCommandResult.Outcome] {
        var outcomes: [HostCommandResult.Outcome] = []
        link.submit(command, recoverOnTimeout: recoverOnTimeout) { [unowned self] outcome, _ in
            outcomes.append(outcome)
            self.loop.stop()
        }
        if outcomes.isEmpty { try runLoop() }
        return outcomes
    }

    /// Reports read together count from when each arrived (the transport's age of the
    /// packet); the batch ends at the read.
    func testReportsGoUpAtTheTimeTheyArrivedAndTheBatchEndsAtTheRead() throws {
        try startScanning()
        var times: [(UInt8, Instant)] = []
        var ends: [Instant] = []
        link.onAdvertisingReport = { report, now in times.append((UInt8(truncatingIfNeeded: report.address.rawValue), now)) }
        link.onAdvertisingReportsEnd = { [unowned self] now in
            ends.append(now)
            self.loop.stop()
        }
        func report(_ address: UInt8) -> HCIPacket {
            HCIPacket(type: .event, payload: [0x3E, 12, 0x02, 1, 0x00, 0x00, address, 0, 0, 0, 0, 0xC0, 0x00, 0xC4])
        }
        transport.inject(report(1), age: .milliseconds(700))
        transport.inject(report(2), age: .milliseconds(200))
        transport.inject(report(3))
        let readAt = loop.now
        try runLoop()
        XCTAssertEqual(times.map(\.0), [1, 2, 3])
        XCTAssertEqual(times.map(\.1), [readAt - .milliseconds(700), readAt - .milliseconds(200), readAt])
        XCTAssertEqual(ends, [readAt])
    }

    func testSuccessCompletesWithTheReturnParameters() throws {
        try startScanning()
        let outcomes = try finish(ReadRSSICommand(connectionHandle: 0x40))
        XCTAssertEqual(outcomes.count, 1)
        guard case .completed(.success, let parameters)? = outcomes.first else { return XCTFail("\(outcomes)") }
        XCTAssertEqual(Array(parameters), [0, 0, 0, 0], "status, handle, RSSI")
        XCTAssertEqual(link.unfinishedCommandCount, 0)
    }

    func testAnErrorStatusCompletesWithTheStatus() throws {
        try startScanning()
        transport.failingOpcodes = [.leClearFilterAcceptList: .commandDisallowed, .leCreateConnection: .connectionLimitExceeded]
        let complete = try finish(LEClearFilterAcceptListCommand())
        guard complete.count == 1, case .completed(.commandDisallowed, _) = complete[0] else { return XCTFail("\(complete)") }
        let status = try finish(LECreateConnectionCommand(filterPolicy: .filterAcceptList))
        guard status.count == 1, case .status(.connectionLimitExceeded) = status[0] else { return XCTFail("\(status)") }
        XCTAssertTrue(link.host.isControllerAnswering, "a refused client command is no reason to reset")
    }

    func testNoAnswerCompletesAsTimedOut() throws {
        try startScanning()
        transport.silentOpcodes = [.readRSSI]
        let submitted = loop.now
        let outcomes = try finish(ReadRSSICommand(connectionHandle: 0x40), recoverOnTimeout: false)
        guard outcomes.count == 1, case .timedOut = outcomes[0] else { return XCTFail("\(outcomes)") }
        XCTAssertEqual(loop.now - submitted, HostConfiguration().commandTimeout, "timed out at the host's command timeout")
        XCTAssertEqual(link.unfinishedCommandCount, 0)
        XCTAssertTrue(link.host.isControllerAnswering, "without recoverOnTimeout the controller is not reset")
    }

    func testACommandTheHostDoesNotTakeCompletesAtOnce() {
        // Not started: the host takes client commands only while scanning.
        var outcomes: [HostCommandResult.Outcome] = []
        link.submit(LEClearFilterAcceptListCommand()) { outcome, _ in outcomes.append(outcome) }
        guard outcomes.count == 1, case .notSent(.controllerNotReady) = outcomes[0] else { return XCTFail("\(outcomes)") }
        XCTAssertEqual(link.unfinishedCommandCount, 0)
    }

    /// Queued and outstanding commands alike end once, as flushed, when the controller is
    /// reset; nothing calls them again when the controller comes back.
    func testAResetCompletesEveryUnfinishedCommandOnceAsFlushed() throws {
        try startScanning()
        transport.silentOpcodes = [.leClearFilterAcceptList]
        var outcomes: [Int: [HostCommandResult.Outcome]] = [:]
        for (index, command) in [LEClearFilterAcceptListCommand().packet, LECreateConnectionCancelCommand().packet,
                                 LEClearFilterAcceptListCommand().packet].enumerated() {
            let opcode = try HCICommandPacket.split(command).0
            link.submit(packet: command, opcode: opcode) { outcome, _ in outcomes[index, default: []].append(outcome) }
        }
        XCTAssertEqual(link.unfinishedCommandCount, 3, "one outstanding, unanswered; two queued behind it")
        XCTAssertEqual(outcomes.count, 0)

        transport.inject(HCIEvent.hardwareError(code: 0x42).packet)
        stopWhenScanning = true
        try runLoop()

        XCTAssertTrue(states.contains { if case .recovering(.hardwareError(0x42), _) = $0 { true } else { false } }, "\(states)")
        XCTAssertTrue(link.host.isControllerAnswering, "scanning again after the reset")
        XCTAssertEqual(outcomes.keys.sorted(), [0, 1, 2])
        for (index, calls) in outcomes {
            XCTAssertEqual(calls.count, 1, "command \(index): \(calls)")
            guard case .flushed? = calls.first else { return XCTFail("command \(index): \(calls)") }
        }
        XCTAssertEqual(link.unfinishedCommandCount, 0)
    }

    func testALostTransportCompletesTheUnfinishedCommandsAsFlushed() throws {
        try startScanning()
        transport.silentOpcodes = [.leClearFilterAcceptList]
        var outcomes: [HostCommandResult.Outcome] = []
        link.submit(LEClearFilterAcceptListCommand()) { outcome, _ in outcomes.append(outcome) }
        transport.failNextReceive = true
        stopWhenScanning = true
        try runLoop()

        XCTAssertEqual(transport.opens, 2, "reopened")
        guard outcomes.count == 1, case .flushed = outcomes[0] else { return XCTFail("\(outcomes)") }
        XCTAssertEqual(link.unfinishedCommandCount, 0)
    }

    func testACompletionMaySubmitTheNextCommand() throws {
        try startScanning()
        var order: [String] = []
        link.submit(LEClearFilterAcceptListCommand()) { [unowned self] _, _ in
            order.append("clear")
            self.link.submit(LECreateConnectionCancelCommand()) { _, _ in
                order.append("cancel")
                self.loop.stop()
            }
        }
        try runLoop()
        XCTAssertEqual(order, ["clear", "cancel"])
        XCTAssertEqual(link.unfinishedCommandCount, 0)
    }
}
