import EventLoop
import HCI
import SplitMix
import XCTest
@testable import Host

final class RecoveryTests: XCTestCase {
    func testZeroCreditsBlockUntilALaterEventGrantsSome() {
        var controller = FakeController.bumble()
        controller.creditsInNextAnswer = 0
        var harness = HostHarness(controller: controller)
        harness.open()
        XCTAssertEqual(harness.sentOpcodes, [.reset], "Reset's answer granted no credits: nothing more goes out")
        // A controller hands credits back with a no-op Command Complete.
        harness.inject(HCIEvent.commandComplete(HCICommandComplete(numberOfCommandPackets: 1, opcode: .noOperation, returnParameters: [])).packet)
        XCTAssertTrue(harness.host.state.isScanning)
        XCTAssertEqual(harness.host.counters.unmatchedCommandCompletes, 0, "a credit grant is not an unmatched answer")
    }

    func testCreditsNeverGrantedIsAStall() {
        var controller = FakeController.bumble()
        controller.creditsInNextAnswer = 0
        var harness = HostHarness(controller: controller)
        harness.open()
        harness.advance(by: .seconds(2))
        XCTAssertEqual(harness.host.state, .recovering(reason: .creditStarvation, attempt: 1))
        harness.advance(by: .seconds(1))
        XCTAssertTrue(harness.host.state.isScanning)
    }

    func testCommandFlowRespectsSeveralCreditsAndMatchesByOpcode() {
        var flow = HCICommandFlow(timeout: .seconds(2))
        flow.enqueue(ResetCommand().packet, opcode: .reset, origin: .host)
        XCTAssertEqual(flow.takeSendable(now: .zero).count, 1)
        flow.enqueue(ReadBDAddrCommand().packet, opcode: .readBDAddr, origin: .host)
        flow.enqueue(ReadBDAddrCommand().packet, opcode: .readBDAddr, origin: .host)
        flow.enqueue(ReadBufferSizeCommand().packet, opcode: .readBufferSize, origin: .host)
        XCTAssertTrue(flow.takeSendable(now: .zero).isEmpty, "no credit left")
        XCTAssertNotNil(flow.receiveAnswer(opcode: .reset, numberOfCommandPackets: 3, now: .zero))
        // Three credits, but the second Read BD_ADDR waits for the first's answer.
        XCTAssertEqual(flow.takeSendable(now: .zero).count, 1)
        XCTAssertNil(flow.receiveAnswer(opcode: .leSetScanEnable, numberOfCommandPackets: 3, now: .zero))
        XCTAssertNotNil(flow.receiveAnswer(opcode: .readBDAddr, numberOfCommandPackets: 3, now: .zero))
        XCTAssertEqual(flow.takeSendable(now: .zero).count, 2)
        XCTAssertEqual(flow.nextDeadline, Instant.zero + .seconds(2))
        guard case .command(let entry) = flow.takeExpired(now: .zero + .seconds(2)) else { return XCTFail() }
        XCTAssertEqual(entry.opcode, .readBDAddr)
        XCTAssertEqual(flow.flush().count, 1)
        XCTAssertTrue(flow.isIdle)
        XCTAssertEqual(flow.credits, 1)
    }

    func testCommandTimeoutRecoversAndScansAgain() {
        var controller = FakeController.bumble()
        controller.dropNextAnswer = .readLocalSupportedCommands
        var harness = HostHarness(controller: controller)
        harness.open()
        XCTAssertEqual(harness.host.state, .initializing)
        harness.advance(by: .milliseconds(1999))
        XCTAssertEqual(harness.host.state, .initializing)
        harness.advance(by: .milliseconds(1))
        XCTAssertEqual(harness.host.state, .recovering(reason: .commandTimeout(.readLocalSupportedCommands), attempt: 1))
        XCTAssertEqual(harness.host.counters.commandTimeouts, 1)
        harness.advance(by: .milliseconds(250))
        XCTAssertTrue(harness.host.state.isScanning)
        XCTAssertEqual(harness.sentOpcodes.filter { $0 == .reset }.count, 2)
        XCTAssertEqual(harness.host.counters.recoveries, 1)
        XCTAssertFalse(harness.stuck)
    }

    func testHardwareErrorResetsAndResumesScanning() throws {
        var harness = HostHarness(controller: .bumble())
        harness.open()
        harness.submit(LEClearFilterAcceptListCommand(), token: 1)
        harness.controller.isStalled = true
        harness.submit(LEClearFilterAcceptListCommand(), token: 2)
        harness.inject(HCIEvent.hardwareError(code: 0x0A).packet)
        XCTAssertEqual(harness.host.state, .recovering(reason: .hardwareError(code: 0x0A), attempt: 1))
        XCTAssertFalse(harness.host.isControllerAnswering)
        guard case .flushed = harness.results.last?.outcome else { return XCTFail("the pending client command is flushed") }
        XCTAssertEqual(harness.results.last?.token, 2)
        harness.controller.isStalled = false
        let resetsBefore = harness.sentOpcodes.filter { $0 == .reset }.count
        harness.advance(by: .milliseconds(250))
        XCTAssertTrue(harness.host.state.isScanning)
        XCTAssertEqual(harness.sentOpcodes.filter { $0 == .reset }.count, resetsBefore + 1)
        XCTAssertEqual(harness.host.counters.hardwareErrors, 1)
    }

    func testClosedTransportIsReopenedWithGrowingBackoffAndScanningResumes() throws {
        var harness = HostHarness(controller: .bumble())
        harness.open()
        harness.controllerReachable = false
        harness.feed(.transportClosed(reason: "read: connection reset"))
        XCTAssertEqual(harness.host.state, .recovering(reason: .transportClosed("read: connection reset"), attempt: 1))
        harness.advance(by: .seconds(20))
        let expected: [Duration] = [.milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2), .seconds(4)]
        XCTAssertEqual(Array(harness.reopenDelays.prefix(5)), expected)
        XCTAssertTrue(harness.reopenDelays.dropFirst(5).allSatisfy { $0 == .seconds(4) }, "capped at 4 s")
        XCTAssertFalse(harness.host.state.isScanning)

        // The controller becomes usable again: scanning within 5 s.
        harness.controllerReachable = true
        let usableAt = harness.now
        harness.advance(by: .seconds(5))
        let scanningAt = try XCTUnwrap(harness.states.last { $0.0 >= usableAt && $0.1.isScanning }?.0)
        XCTAssertLessThanOrEqual(scanningAt - usableAt, .seconds(5))
        XCTAssertEqual(harness.host.counters.transportCloses, harness.reopenDelays.count)

        // Back to scanning, the backoff starts over.
        harness.controllerReachable = false
        harness.feed(.transportClosed(reason: "again"))
        XCTAssertEqual(harness.reopenDelays.last, .milliseconds(250))
    }

    func testStallIsDetectedByTheProbeWithinThirtySeconds() throws {
        var harness = HostHarness(controller: .bumble())
        harness.open()
        harness.advance(by: .seconds(25))
        XCTAssertTrue(harness.host.state.isScanning, "a healthy controller answers its probes")
        XCTAssertGreaterThanOrEqual(harness.host.counters.probesSent, 2)
        XCTAssertTrue(harness.sentOpcodes.suffix(1).allSatisfy { $0 == .readBDAddr })

        harness.controller.isStalled = true
        let stalledAt = harness.now
        harness.advance(by: .seconds(30))
        let detected = try XCTUnwrap(harness.states.first { $0.0 > stalledAt && $0.1 == .recovering(reason: .controllerStalled, attempt: 1) })
        XCTAssertLessThanOrEqual(detected.0 - stalledAt, .seconds(12))
        XCTAssertFalse(harness.host.isControllerAnswering)
    }

    func testRepeatedFailedResetsReopenTheTransport() {
        var harness = HostHarness(controller: .bumble())
        harness.open()
        harness.controller.isStalled = true
        harness.advance(by: .seconds(60))
        XCTAssertGreaterThanOrEqual(harness.closes, 1, "resets kept timing out: the transport is reopened")
        harness.controller.isStalled = false
        harness.advance(by: .seconds(10))
        XCTAssertTrue(harness.host.state.isScanning)
        XCTAssertFalse(harness.stuck)
    }

    func testUnmatchedCommandCompleteIsCountedAndIgnored() {
        var harness = HostHarness(controller: .bumble())
        harness.open()
        let state = harness.host.state
        harness.inject(HCIEvent.commandComplete(HCICommandComplete(opcode: .leSetAdvertisingEnable, returnParameters: [0])).packet)
        harness.inject(HCIEvent.commandStatus(HCICommandStatus(status: .success, opcode: .leCreateConnection)).packet)
        XCTAssertEqual(harness.host.counters.unmatchedCommandCompletes, 2)
        XCTAssertEqual(harness.host.state, state)
        // And the flow still works.
        harness.submit(LEClearFilterAcceptListCommand(), token: 1)
        guard case .completed(.success, _) = harness.results.last?.outcome else { return XCTFail() }
    }

    func testMalformedAndUnknownEventsAreCountedWithoutHarm() {
        var harness = HostHarness(controller: .bumble())
        harness.open()
        var random = SplitMix64(seed: 7)
        for _ in 0 ..< 2000 {
            var payload = [UInt8.random(in: 0 ... 255, using: &random), 0]
            payload += (0 ..< Int.random(in: 0 ... 40, using: &random)).map { _ in UInt8.random(in: 0 ... 255, using: &random) }
            payload[1] = UInt8.random(in: 0 ... 3, using: &random) == 0 ? UInt8(payload.count - 2) : UInt8.random(in: 0 ... 255, using: &random)
            // Keep hardware errors and command answers out: they have their own tests.
            if [EventCode.hardwareError.rawValue, EventCode.commandComplete.rawValue, EventCode.commandStatus.rawValue].contains(payload[0]) {
                payload[0] = EventCode.leMeta.rawValue
            }
            harness.inject(HCIPacket(type: .event, payload: payload))
        }
        harness.inject(HCIPacket(type: .event, payload: [0x3E, 0x03, 0x02, 0x05, 0x00]))
        XCTAssertGreaterThan(harness.host.counters.malformedEvents, 0)
        XCTAssertGreaterThan(harness.host.counters.unknownEvents, 0)
        XCTAssertTrue(harness.host.state.isScanning)
        let logged = harness.actions.filter { if case .log(.malformedEvent) = $0 { true } else { false } }.count
        XCTAssertLessThanOrEqual(logged, 12, "malformed events are logged at powers of two only")
    }

    func testReportsAreDeliveredAndExtendedFragmentsJoined() {
        var harness = HostHarness(controller: .modern())
        harness.open()
        let address = BluetoothAddress(rawValue: 0xC011_2233_4455)
        func fragment(_ data: [UInt8], _ status: LEAdvertisingReport.DataStatus) -> LEAdvertisingReport {
            LEAdvertisingReport(properties: [.connectable], dataStatus: status, addressType: .randomDevice, address: address,
                                secondaryPHY: .le2M, sid: 2, rssi: -50, data: data[...])
        }
        harness.inject(HCIEvent.leMeta(.extendedAdvertisingReport([fragment(Array(0 ..< 200), .incompleteMoreToCome)])).packet)
        XCTAssertTrue(harness.reports.isEmpty)
        harness.inject(HCIEvent.leMeta(.extendedAdvertisingReport([fragment(Array(200 ..< 250), .complete)])).packet)
        XCTAssertEqual(harness.reports.count, 1)
        XCTAssertEqual(Array(harness.reports[0].data), (0 ..< 250).map { UInt8($0) })
        XCTAssertEqual(harness.reports[0].dataStatus, .complete)
        harness.inject(HCIEvent.leMeta(.advertisingReport([LEAdvertisingReport(properties: [.legacy], addressType: .publicDevice,
                                                                               address: address, rssi: -70, data: [1])])).packet)
        XCTAssertEqual(harness.reports.count, 2)
        XCTAssertEqual(harness.host.counters.advertisingReports, 2)
    }
}
