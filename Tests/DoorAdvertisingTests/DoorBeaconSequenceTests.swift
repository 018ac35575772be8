import Advertisements
import DoorAdvertising
import HCI
import Host
import XCTest

final class DoorBeaconSequenceTests: XCTestCase {
    private func beacon() -> DoorBeacon {
        let uuid = UUID128(high: 0xE2C5_6DB5_DFFB_48D2, low: 0xB060_D0F5_A710_96E0)
        return DoorBeacon(intervalMilliseconds: 200, iBeacon: IBeacon(uuid: uuid, major: 10, minor: 3, measuredPower: -59),
                          serviceUUID: UUID128(high: 1, low: 2))!
    }

    private func scanning(_ family: CommandFamily) -> HostState { .scanning(ControllerInfo(commandFamily: family)) }

    private func submitted(_ action: DoorBeaconSequence.Action?, file: StaticString = #filePath, line: UInt = #line) -> (HCIPacket, Opcode, UInt64)? {
        guard case .submit(let packet, let opcode, let token)? = action else {
            XCTFail("expected a submit, got \(String(describing: action))", file: file, line: line)
            return nil
        }
        return (packet, opcode, token)
    }

    private let ok = HostCommandResult.Outcome.completed(status: .success, returnParameters: [0])

    func testLegacySequenceRunsOneCommandAtATimeAndEndsAdvertising() throws {
        var sequence = DoorBeaconSequence(beacon: beacon())
        var opcodes: [Opcode] = []
        var action = sequence.hostStateChanged(scanning(.legacy))
        while case .submit(let packet, let opcode, let token)? = action {
            opcodes.append(opcode)
            if opcode == .leSetAdvertisingParameters {
                let command = try LESetAdvertisingParametersCommand(packet: packet)
                XCTAssertEqual(command.type, .scannableUndirected)
                XCTAssertEqual(command.intervalMin, 320)
            }
            if opcode == .leSetScanResponseData {
                XCTAssertEqual(try LESetScanResponseDataCommand(packet: packet).data, beacon().scanResponseData)
            }
            XCTAssertNil(sequence.commandFinished(token: token &+ 1, outcome: ok), "a foreign token is ignored")
            action = sequence.commandFinished(token: token, outcome: ok)
        }
        XCTAssertEqual(opcodes, [.leSetAdvertisingParameters, .leSetAdvertisingData, .leSetScanResponseData, .leSetAdvertisingEnable])
        guard case .advertising(.legacy)? = action else { return XCTFail("\(String(describing: action))") }
        XCTAssertTrue(sequence.isAdvertising)
    }

    func testExtendedSequenceUsesLegacyPDUPropertiesOnSetZero() throws {
        var sequence = DoorBeaconSequence(beacon: beacon())
        var opcodes: [Opcode] = []
        var action = sequence.hostStateChanged(scanning(.extended))
        while case .submit(let packet, let opcode, let token)? = action {
            opcodes.append(opcode)
            XCTAssertTrue(opcode.isExtendedFamily, "never mixed")
            if opcode == .leSetExtendedAdvertisingParameters {
                let command = try LESetExtendedAdvertisingParametersCommand(packet: packet)
                XCTAssertEqual(command.properties, [.legacy, .scannable])
                XCTAssertEqual(command.handle, 0)
            }
            action = sequence.commandFinished(token: token, outcome: ok)
        }
        XCTAssertEqual(opcodes, [.leSetExtendedAdvertisingParameters, .leSetExtendedAdvertisingData,
                                 .leSetExtendedScanResponseData, .leSetExtendedAdvertisingEnable])
        guard case .advertising(.extended)? = action else { return XCTFail("\(String(describing: action))") }
    }

    func testFailureStopsAndTheNextRecoveryStartsAgain() throws {
        var sequence = DoorBeaconSequence(beacon: beacon())
        let first = try XCTUnwrap(submitted(sequence.hostStateChanged(scanning(.legacy))))
        let failed = sequence.commandFinished(token: first.2, outcome: .completed(status: HCIStatus(rawValue: 0x12), returnParameters: [0x12]))
        guard case .failed(.leSetAdvertisingParameters, _)? = failed else { return XCTFail("\(String(describing: failed))") }
        XCTAssertNil(sequence.commandFinished(token: first.2, outcome: ok), "nothing more after a failure")

        XCTAssertNil(sequence.hostStateChanged(.recovering(reason: .controllerStalled, attempt: 1)))
        let again = try XCTUnwrap(submitted(sequence.hostStateChanged(scanning(.legacy))))
        XCTAssertEqual(again.1, .leSetAdvertisingParameters)
        XCTAssertNotEqual(again.2, first.2)
        XCTAssertNil(sequence.commandFinished(token: first.2, outcome: ok), "an old run's answer is ignored")
    }

    func testFlushedCommandWaitsForTheNextScanningState() throws {
        var sequence = DoorBeaconSequence(beacon: beacon())
        let first = try XCTUnwrap(submitted(sequence.hostStateChanged(scanning(.legacy))))
        XCTAssertNil(sequence.commandFinished(token: first.2, outcome: .flushed))
        XCTAssertFalse(sequence.isAdvertising)
        XCTAssertNotNil(submitted(sequence.hostStateChanged(scanning(.legacy))))
    }

    func testAnEnrolmentWindowPausesTheBeaconOnAirAndResumesWithAFreshRun() throws {
        var sequence = DoorBeaconSequence(beacon: beacon())
        var action = sequence.hostStateChanged(scanning(.extended))
        while case .submit(_, _, let token)? = action { action = sequence.commandFinished(token: token, outcome: ok) }
        XCTAssertTrue(sequence.isAdvertising)

        let stop = try XCTUnwrap(submitted(sequence.setPaused(true)))
        let command = try LESetExtendedAdvertisingEnableCommand(packet: stop.0)
        XCTAssertFalse(command.enable)
        XCTAssertEqual(command.sets.map(\.handle), [0], "the set the window takes")
        XCTAssertNil(sequence.commandFinished(token: stop.2, outcome: ok), "the stop's answer starts nothing")
        XCTAssertNil(sequence.setPaused(true), "pausing twice changes nothing")
        XCTAssertFalse(sequence.isAdvertising)

        let resumed = try XCTUnwrap(submitted(sequence.setPaused(false)))
        XCTAssertEqual(resumed.1, .leSetExtendedAdvertisingParameters, "a fresh run from its first step")
    }

    func testPausingMidRunIgnoresTheRunsAnswersAndARecoveryWhilePausedStartsNothing() throws {
        var sequence = DoorBeaconSequence(beacon: beacon())
        let first = try XCTUnwrap(submitted(sequence.hostStateChanged(scanning(.legacy))))
        let stop = try XCTUnwrap(submitted(sequence.setPaused(true)))
        XCTAssertEqual(stop.1, .leSetAdvertisingEnable)
        XCTAssertFalse(try LESetAdvertisingEnableCommand(packet: stop.0).enable)
        XCTAssertNil(sequence.commandFinished(token: first.2, outcome: ok), "the paused run goes no further")

        XCTAssertNil(sequence.hostStateChanged(.recovering(reason: .controllerStalled, attempt: 1)))
        XCTAssertNil(sequence.hostStateChanged(scanning(.legacy)), "still paused after a recovery")
        XCTAssertEqual(try XCTUnwrap(submitted(sequence.setPaused(false))).1, .leSetAdvertisingParameters,
                       "resumed on the controller as it came back")
    }

    func testResumingWhileTheControllerIsBeingResetWaitsForScanning() throws {
        var sequence = DoorBeaconSequence(beacon: beacon())
        _ = sequence.hostStateChanged(scanning(.legacy))
        _ = sequence.setPaused(true)
        XCTAssertNil(sequence.hostStateChanged(.recovering(reason: .controllerStalled, attempt: 1)))
        XCTAssertNil(sequence.setPaused(false), "no controller to advertise on")
        XCTAssertEqual(try XCTUnwrap(submitted(sequence.hostStateChanged(scanning(.legacy)))).1, .leSetAdvertisingParameters)
    }
}
