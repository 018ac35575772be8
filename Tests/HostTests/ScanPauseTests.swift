import EventLoop
import HCI
import XCTest
@testable import Host

/// Pausing scanning around a create-connection, for controllers whose LE Supported States
/// forbid scanning and initiating at once (Bumble's profile).
final class ScanPauseTests: XCTestCase {
    private func exclusiveController() -> FakeController {
        var controller = FakeController.bumble()
        controller.rejectsInitiatingWhileScanning = true
        return controller
    }

    private let peer = BluetoothAddress("C0:11:22:33:44:55")!
    private let connectToken: UInt64 = 0xC0

    private func lastStatus(_ harness: HostHarness) -> HCIStatus? {
        guard let result = harness.results.last, result.token == connectToken, case .status(let status) = result.outcome else { return nil }
        return status
    }

    private func connectionComplete(handle: UInt16) -> HCIPacket {
        var parameters: [UInt8] = [0x01, 0x00]                       // subevent, status
        parameters += [UInt8(handle & 0xFF), UInt8(handle >> 8)]     // handle
        parameters += [0x00, 0x01]                                   // role central, random peer
        parameters += [0x55, 0x44, 0x33, 0x22, 0x11, 0xC0]           // peer address
        parameters += [0x18, 0x00, 0x00, 0x00, 0xC8, 0x00, 0x00]     // interval, latency, timeout, accuracy
        return HCIPacket(type: .event, payload: [0x3E, UInt8(parameters.count)] + parameters)
    }

    func testControllerProfileForbidsScanningWhileInitiating() throws {
        var harness = HostHarness(controller: exclusiveController())
        harness.open()
        let info = try XCTUnwrap(harness.host.controllerInfo)
        XCTAssertFalse(info.supportedStates.canScanWhileInitiating(active: false))
        // Without a pause the controller refuses: the fake enforces its states.
        harness.submit(LECreateConnectionCommand(filterPolicy: .peerAddress, peerAddressType: .randomDevice, peerAddress: peer),
                       token: connectToken)
        XCTAssertEqual(lastStatus(harness), .commandDisallowed)
        XCTAssertEqual(harness.controller.createConnectionsAccepted, 0)
    }

    func testCreateConnectionGoesOutOnlyWhileScanningIsOffAndScanningResumes() throws {
        var harness = HostHarness(controller: exclusiveController())
        harness.open()
        XCTAssertTrue(harness.controller.isScanning)

        // The scheduler's order: pause, then create-connection, both through the flow.
        harness.process(harness.host.setScanningPaused(true, now: harness.now))
        harness.submit(LECreateConnectionCommand(filterPolicy: .peerAddress, peerAddressType: .randomDevice, peerAddress: peer),
                       token: connectToken)
        XCTAssertTrue(harness.host.isScanningPaused)
        XCTAssertFalse(harness.controller.isScanning)
        XCTAssertEqual(harness.controller.createConnectionsWhileScanning, 0)
        XCTAssertEqual(harness.controller.createConnectionsAccepted, 1)
        XCTAssertEqual(lastStatus(harness), .success)
        XCTAssertEqual(Array(harness.sentOpcodes.suffix(2)), [.leSetScanEnable, .leCreateConnection])
        let disable = try LESetScanEnableCommand(packet: harness.controller.receivedPackets[harness.controller.receivedPackets.count - 2])
        XCTAssertFalse(disable.enable)

        // Probes keep running while paused: a stalled controller is still noticed.
        let probes = harness.host.counters.probesSent
        harness.advance(by: harness.host.configuration.probeInterval * 3)
        XCTAssertGreaterThanOrEqual(harness.host.counters.probesSent, probes + 2)
        XCTAssertTrue(harness.host.isControllerAnswering)
        XCTAssertFalse(harness.controller.isScanning)

        // The connection completes; the scheduler resumes scanning.
        harness.inject(connectionComplete(handle: 0x40))
        harness.process(harness.host.setScanningPaused(false, now: harness.now))
        XCTAssertFalse(harness.host.isScanningPaused)
        XCTAssertTrue(harness.controller.isScanning)
        XCTAssertEqual(harness.host.counters.recoveries, 0)
        XCTAssertFalse(harness.stuck)
    }

    func testAskingTwiceSendsOnce() {
        var harness = HostHarness(controller: exclusiveController())
        harness.open()
        let before = harness.sentOpcodes.count
        harness.process(harness.host.setScanningPaused(true, now: harness.now))
        harness.process(harness.host.setScanningPaused(true, now: harness.now))
        XCTAssertEqual(harness.sentOpcodes.count, before + 1)
        harness.process(harness.host.setScanningPaused(false, now: harness.now))
        harness.process(harness.host.setScanningPaused(false, now: harness.now))
        XCTAssertEqual(harness.sentOpcodes.count, before + 2)
        XCTAssertTrue(harness.controller.isScanning)
    }

    func testExtendedFamilyPausesWithExtendedScanEnable() throws {
        var controller = FakeController.modern()
        controller.rejectsInitiatingWhileScanning = true
        var harness = HostHarness(controller: controller)
        harness.open()
        harness.process(harness.host.setScanningPaused(true, now: harness.now))
        XCTAssertEqual(harness.sentOpcodes.last, .leSetExtendedScanEnable)
        XCTAssertFalse(harness.controller.isScanning)
        harness.submit(LEExtendedCreateConnectionCommand(filterPolicy: .peerAddress, peerAddressType: .randomDevice, peerAddress: peer),
                       token: connectToken)
        XCTAssertEqual(lastStatus(harness), .success)
        harness.process(harness.host.setScanningPaused(false, now: harness.now))
        XCTAssertTrue(harness.controller.isScanning)
        XCTAssertEqual(harness.controller.familyViolations, 0)
    }

    func testNotScanningIgnoresThePause() {
        var host = HostController()
        XCTAssertTrue(host.setScanningPaused(true, now: Instant(nanoseconds: 0)).isEmpty)
        XCTAssertFalse(host.isScanningPaused)
    }

    func testRecoveryScansAgainUnpaused() throws {
        var harness = HostHarness(controller: exclusiveController())
        harness.open()
        harness.process(harness.host.setScanningPaused(true, now: harness.now))
        XCTAssertFalse(harness.controller.isScanning)
        harness.inject(HCIEvent.hardwareError(code: 0x0A).packet)
        XCTAssertFalse(harness.host.isControllerAnswering)
        harness.advance(by: .seconds(2))
        XCTAssertTrue(harness.host.isControllerAnswering)
        XCTAssertFalse(harness.host.isScanningPaused, "documented: a recovery resumes scanning")
        XCTAssertTrue(harness.controller.isScanning)
    }

    func testFailedPauseRecovers() {
        var harness = HostHarness(controller: exclusiveController())
        harness.open()
        harness.controller.failingOpcodes[.leSetScanEnable] = .unspecifiedError
        harness.process(harness.host.setScanningPaused(true, now: harness.now))
        XCTAssertEqual(harness.host.state, .recovering(reason: .commandFailed(.leSetScanEnable, .unspecifiedError), attempt: 1))
        harness.controller.failingOpcodes = [:]
        harness.advance(by: .seconds(2))
        XCTAssertTrue(harness.host.isControllerAnswering)
        XCTAssertTrue(harness.controller.isScanning)
    }
}
