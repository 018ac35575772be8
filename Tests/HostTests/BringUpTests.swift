import EventLoop
import HCI
import XCTest
@testable import Host

final class BringUpTests: XCTestCase {
    private let expectedLegacySequence: [Opcode] = [
        .reset, .readLocalVersionInformation, .readLocalSupportedCommands, .readLocalSupportedFeatures, .readBDAddr,
        .leReadLocalSupportedFeatures, .leReadBufferSize, .leReadSupportedStates, .setEventMask, .leSetEventMask,
        .leReadFilterAcceptListSize, .leSetScanParameters, .leSetScanEnable,
    ]

    func testBumbleProfileComesUpLegacyAndScans() throws {
        var harness = HostHarness(controller: .bumble())
        harness.open()
        XCTAssertEqual(harness.sentOpcodes, expectedLegacySequence)
        let info = try XCTUnwrap(harness.host.controllerInfo)
        XCTAssertEqual(info.commandFamily, .legacy, "feature bit set but no extended commands listed")
        XCTAssertTrue(info.leFeatures.contains(.extendedAdvertising))
        XCTAssertEqual(info.address, harness.controller.address)
        XCTAssertEqual(info.filterAcceptListSize, 8)
        XCTAssertEqual(info.leBuffer, ACLBufferInfo(packetLength: 27, packetCount: 64, isShared: false))
        XCTAssertFalse(info.supportedStates.canScanWhileInitiating(active: false))
        XCTAssertEqual(info.version?.manufacturer, 0x0059)
        XCTAssertTrue(harness.host.isControllerAnswering)
        XCTAssertTrue(harness.controller.isScanning)
        XCTAssertEqual(harness.states.map(\.1).first, .initializing)
        XCTAssertEqual(harness.states.last?.1, .scanning(info))

        // Scan parameters follow the timing rule; duplicates are not filtered.
        let packets = harness.controller.receivedPackets
        let parameters = try LESetScanParametersCommand(packet: packets[packets.count - 2])
        let timing = ScanTiming.derive(harness.host.configuration.scan)
        XCTAssertEqual(parameters.interval, timing.interval)
        XCTAssertEqual(parameters.window, timing.window)
        XCTAssertEqual(parameters.scanType, .passive)
        let enable = try LESetScanEnableCommand(packet: packets[packets.count - 1])
        XCTAssertEqual(enable, LESetScanEnableCommand(enable: true, filterDuplicates: false))
        XCTAssertFalse(harness.sentOpcodes.contains(where: \.isExtendedFamily))
        XCTAssertEqual(harness.controller.familyViolations, 0)
    }

    func testModernControllerComesUpExtended() throws {
        var configuration = HostConfiguration()
        configuration.scan = ScanSettings(mode: .active, tagIntervalMs: 1000, scanCodedPHY: true)
        var harness = HostHarness(controller: .modern(), configuration: configuration)
        harness.open()
        let info = try XCTUnwrap(harness.host.controllerInfo)
        XCTAssertEqual(info.commandFamily, .extended)
        XCTAssertEqual(Array(harness.sentOpcodes.suffix(2)), [.leSetExtendedScanParameters, .leSetExtendedScanEnable])
        XCTAssertFalse(harness.sentOpcodes.contains(where: \.isLegacyFamily))
        let packets = harness.controller.receivedPackets
        let parameters = try LESetExtendedScanParametersCommand(packet: packets[packets.count - 2])
        XCTAssertEqual(parameters.le1M?.scanType, .active)
        XCTAssertNotNil(parameters.leCoded, "coded PHY asked for and supported")
        XCTAssertEqual(try LESetExtendedScanEnableCommand(packet: packets[packets.count - 1]),
                       LESetExtendedScanEnableCommand(enable: true, filterDuplicates: 0, duration: 0, period: 0))
    }

    func testAStaticRandomAddressIsSetBeforeScanningOnlyWithoutAPublicAddress() throws {
        let identity = BluetoothAddress("C7:11:22:33:44:55")!
        var configuration = HostConfiguration()
        configuration.staticRandomAddress = identity

        // No BD_ADDR (all zero, as Bumble's plain controller or a Pi whose firmware loader
        // set none): the address is set during bring-up, while the controller does not scan.
        var withoutAddress = FakeController.bumble()
        withoutAddress.address = BluetoothAddress(rawValue: 0)
        var harness = HostHarness(controller: withoutAddress, configuration: configuration)
        harness.open()
        XCTAssertEqual(harness.sentOpcodes, Array(expectedLegacySequence.dropLast(2)) + [.leSetRandomAddress, .leSetScanParameters, .leSetScanEnable])
        XCTAssertEqual(harness.controller.randomAddress, identity)
        let info = try XCTUnwrap(harness.host.controllerInfo)
        XCTAssertFalse(info.hasPublicAddress)
        XCTAssertEqual(info.staticRandomAddress, identity)

        // An all-ones BD_ADDR is no usable address either.
        var allOnes = FakeController.bumble()
        allOnes.address = BluetoothAddress(rawValue: 0xFFFF_FFFF_FFFF)
        var onesHarness = HostHarness(controller: allOnes, configuration: configuration)
        onesHarness.open()
        XCTAssertEqual(onesHarness.host.controllerInfo?.staticRandomAddress, identity)

        // A public address: nothing set, the identity is the public one.
        var publicHarness = HostHarness(controller: .bumble(), configuration: configuration)
        publicHarness.open()
        XCTAssertEqual(publicHarness.sentOpcodes, expectedLegacySequence)
        XCTAssertNil(publicHarness.host.controllerInfo?.staticRandomAddress)
        XCTAssertEqual(publicHarness.host.controllerInfo?.hasPublicAddress, true)

        // Nothing configured: nothing set.
        var unconfigured = HostHarness(controller: withoutAddress)
        unconfigured.open()
        XCTAssertEqual(unconfigured.sentOpcodes, expectedLegacySequence)
        XCTAssertNil(unconfigured.host.controllerInfo?.staticRandomAddress)

        // A controller that refuses it still comes up, without one (enrolment then says so).
        var refusing = withoutAddress
        refusing.failingOpcodes[.leSetRandomAddress] = .commandDisallowed
        var refusedHarness = HostHarness(controller: refusing, configuration: configuration)
        refusedHarness.open()
        XCTAssertTrue(refusedHarness.controller.isScanning)
        XCTAssertNil(refusedHarness.host.controllerInfo?.staticRandomAddress)
    }

    func testFamilyNeedsBothFeatureAndCommands() {
        let all = FakeController.commands(FakeController.legacyCommandSet + FakeController.extendedCommandSet)
        let legacyOnly = FakeController.commands(FakeController.legacyCommandSet)
        XCTAssertEqual(CommandFamily.choose(features: .extendedAdvertising, commands: all), .extended)
        XCTAssertEqual(CommandFamily.choose(features: .extendedAdvertising, commands: legacyOnly), .legacy)
        XCTAssertEqual(CommandFamily.choose(features: [], commands: all), .legacy)
        // Only two of the three extended scan/connect commands: still legacy.
        let partial = FakeController.commands(FakeController.legacyCommandSet + [.leSetExtendedScanParameters, .leSetExtendedScanEnable])
        XCTAssertEqual(CommandFamily.choose(features: .extendedAdvertising, commands: partial), .legacy)

        var noFeature = FakeController.modern()
        noFeature.leFeatures = [.encryption]
        var harness = HostHarness(controller: noFeature)
        harness.open()
        XCTAssertEqual(harness.host.controllerInfo?.commandFamily, .legacy)
        XCTAssertFalse(harness.sentOpcodes.contains(where: \.isExtendedFamily))
    }

    func testLegacyHostNeverSendsExtendedCommandsEvenAcrossRecoveries() {
        var harness = HostHarness(controller: .bumble())
        harness.open()
        harness.submit(LESetExtendedScanEnableCommand(enable: false), token: 7)
        guard case .notSent(.wrongCommandFamily(.legacy)) = harness.results.last?.outcome else {
            return XCTFail("an extended command was accepted by a legacy host")
        }
        harness.inject(HCIEvent.hardwareError(code: 1).packet)
        harness.advance(by: .seconds(5))
        harness.feed(.transportClosed(reason: "test"))
        harness.advance(by: .seconds(5))
        XCTAssertTrue(harness.host.state.isScanning)
        XCTAssertFalse(harness.sentOpcodes.contains(where: \.isExtendedFamily))
        XCTAssertEqual(harness.controller.familyViolations, 0)

        var extended = HostHarness(controller: .modern())
        extended.open()
        extended.submit(LECreateConnectionCommand(filterPolicy: .filterAcceptList), token: 8)
        guard case .notSent(.wrongCommandFamily(.extended)) = extended.results.last?.outcome else {
            return XCTFail("a legacy command was accepted by an extended host")
        }
    }

    func testSharedBufferFallsBackToReadBufferSize() throws {
        var controller = FakeController.bumble()
        controller.leBuffer = LEBufferSize(aclDataPacketLength: 0, totalACLDataPackets: 0)
        var harness = HostHarness(controller: controller)
        harness.open()
        let info = try XCTUnwrap(harness.host.controllerInfo)
        XCTAssertEqual(info.leBuffer, ACLBufferInfo(packetLength: 1021, packetCount: 6, isShared: true))
        let index = try XCTUnwrap(harness.sentOpcodes.firstIndex(of: .readBufferSize))
        XCTAssertEqual(harness.sentOpcodes[index - 1], .leReadBufferSize)

        var separate = HostHarness(controller: .bumble())
        separate.open()
        XCTAssertFalse(separate.sentOpcodes.contains(.readBufferSize))
    }

    func testOptionalStepsTolerateErrorsSilenceAndAbsence() throws {
        var controller = FakeController.bumble()
        controller.failingOpcodes[.leReadSupportedStates] = .unknownCommand
        // Listed but never answered, like Bumble's unhandled commands.
        controller.silentOpcodes.insert(.leReadFilterAcceptListSize)
        var harness = HostHarness(controller: controller)
        harness.open()
        XCTAssertEqual(harness.host.state, .initializing)
        harness.advance(by: .seconds(3))
        let info = try XCTUnwrap(harness.host.controllerInfo, "optional steps failing must not stop bring-up")
        XCTAssertEqual(info.supportedStates, .assumedWhenUnknown)
        XCTAssertEqual(info.filterAcceptListSize, 0)
        XCTAssertEqual(harness.host.counters.recoveries, 0)

        // Not listed at all: not even asked.
        var unlisted = FakeController.bumble()
        var commands = FakeController.legacyCommandSet
        commands.removeAll { $0 == .leReadSupportedStates }
        unlisted.supportedCommands = FakeController.commands(commands)
        var second = HostHarness(controller: unlisted)
        second.open()
        XCTAssertTrue(second.host.state.isScanning)
        XCTAssertFalse(second.sentOpcodes.contains(.leReadSupportedStates))
    }

    func testMandatoryFailureRecovers() {
        var controller = FakeController.bumble()
        controller.failingOpcodes[.leSetEventMask] = .invalidParameters
        var harness = HostHarness(controller: controller)
        harness.open()
        XCTAssertEqual(harness.host.state, .recovering(reason: .commandFailed(.leSetEventMask, .invalidParameters), attempt: 1))
        harness.controller.failingOpcodes = [:]
        harness.advance(by: .milliseconds(250))
        XCTAssertTrue(harness.host.state.isScanning)
    }

    func testClientCommandsFlowAndSilentCommandsCanTimeOutQuietly() throws {
        var harness = HostHarness(controller: .bumble())
        harness.open()
        harness.submit(LEAddDeviceToFilterAcceptListCommand(addressType: .randomDevice, address: BluetoothAddress(rawValue: 5)), token: 1)
        harness.submit(LECreateConnectionCommand(filterPolicy: .filterAcceptList), token: 2)
        XCTAssertEqual(harness.results.count, 2)
        guard case .completed(.success, _) = harness.results[0].outcome else { return XCTFail("\(harness.results[0])") }
        guard case .status(.success) = harness.results[1].outcome else { return XCTFail("\(harness.results[1])") }

        harness.submit(ReadRSSICommand(connectionHandle: 1), token: 3, recoverOnTimeout: false)
        harness.advance(by: .seconds(3))
        guard case .timedOut = harness.results.last?.outcome else { return XCTFail("Read RSSI should time out") }
        XCTAssertEqual(harness.results.last?.token, 3)
        XCTAssertTrue(harness.host.state.isScanning, "a quiet timeout does not reset the controller")
        harness.submit(ReadBDAddrCommand(), token: 4)
        guard case .completed(.success, let parameters) = harness.results.last?.outcome else { return XCTFail() }
        XCTAssertEqual(try BDAddr(returnParameters: parameters).address, harness.controller.address)
    }

    func testClientCommandsBeforeScanningAreRefused() {
        var harness = HostHarness(controller: .bumble())
        harness.submit(LEClearFilterAcceptListCommand(), token: 9)
        guard case .notSent(.controllerNotReady) = harness.results.last?.outcome else { return XCTFail() }
    }
}
