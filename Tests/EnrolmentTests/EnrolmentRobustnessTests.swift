import BluetoothCrypto
import EventLoop
import Foundation
import HCI
import Host
import SecurityManager
import SplitMix
import XCTest
@testable import Enrolment

/// Hostile centrals against the enrolment's wiring: the peripheral data path (pairing
/// delegated) feeding an `EnrolmentSession`, as `beacon-gateway enroll` drives them, with
/// random connections, SMP PDUs (genuine requests, mutated, truncated, random),
/// LTK requests, encryption changes, disconnections, answers and time jumps. Seed and
/// count: BEACON_GATEWAY_FUZZ_SEED, BEACON_GATEWAY_FUZZ_CASES.
final class EnrolmentRobustnessTests: XCTestCase {
    private static let door = AddressWithType(BluetoothAddress(rawValue: 0xF0_F1_F2_F3_F4_F5), isRandom: false)
    private static let handles: [UInt16] = [0x0040, 0x0041, 0x0042, 0x0EFF]
    private static let requests: [[UInt8]] = [
        [0x01, 0x03, 0x00, 0x09, 0x10, 0x02, 0x02], // Secure Connections, Just Works
        [0x01, 0x01, 0x00, 0x0D, 0x10, 0x03, 0x03], // Secure Connections, MITM, display yes/no
        [0x01, 0x03, 0x00, 0x01, 0x10, 0x02, 0x02], // legacy
        [0x01, 0x03, 0x00, 0x09, 0x07, 0x02, 0x02], // short key
    ]

    func testHostileCentralsGetBoundedLawfulAnswers() throws {
        let environment = ProcessInfo.processInfo.environment
        let seed = environment["BEACON_GATEWAY_FUZZ_SEED"].flatMap { UInt64($0) } ?? 0xE4_2011
        let cases = environment["BEACON_GATEWAY_FUZZ_CASES"].flatMap { Int($0) } ?? 400
        var random = SplitMix64(seed: seed)
        var outcomes: [String: Int] = [:]
        for number in 0 ..< cases {
            let outcome = try runCase(random: &random, label: "case \(number) seed \(seed)")
            outcomes[outcome, default: 0] += 1
        }
        XCTAssertGreaterThanOrEqual(outcomes.count, 4, "the cases reach several ends: \(outcomes)")
        print("enrolment robustness: \(cases) cases, seed \(seed), ends \(outcomes.sorted { $0.key < $1.key })")
    }

    private func runCase(random: inout SplitMix64, label: String) throws -> String {
        var path = LEDataPath()
        _ = path.hostStateChanged(.scanning(ControllerInfo(leBuffer: ACLBufferInfo(packetLength: 27, packetCount: 8, isShared: false))))
        let identity = PairingResponder.LocalIdentity(irk: SecretKey128(Octets128(mostSignificantFirst: Array(1 ... 16))!), address: Self.door)
        var session = EnrolmentSession(configuration: .init(
            window: .seconds(Int64.random(in: 5 ... 120, using: &random)),
            method: Bool.random(using: &random) ? .numericComparison : .justWorks,
            localIdentity: identity, advertisement: EnrolmentAdvertisement(name: "door-1")))
        var now = Instant.zero
        var finished: EnrolmentOutcome?
        var phone: UInt16?
        var lastSMP: [UInt8] = Self.requests[0]
        /// Links the session asked to drop, whose Disconnection Complete is still to come.
        var closing: [UInt16] = []

        func check(_ actions: [EnrolmentAction], answering ltk: UInt16? = nil) throws {
            XCTAssertLessThanOrEqual(actions.count, 12, label)
            var ltkAnswers = 0
            for action in actions {
                switch action {
                case .delegatePairing(let delegates):
                    path.delegatesPeripheralPairing = delegates
                case .connected(let handle, _):
                    phone = handle
                case .sendSecurityManager(let handle, let pdu):
                    guard finished == nil || pdu.first == 0x05 else { throw Failure("\(label): SMP after the end: \(pdu)") }
                    guard handle == phone else { throw Failure("\(label): SMP to 0x\(String(handle, radix: 16)), not the phone") }
                    _ = path.sendSecurityManager(pdu, on: handle)
                case .replyLongTermKey(let handle, _):
                    ltkAnswers += 1
                    guard handle == phone, handle == ltk, finished == nil else {
                        throw Failure("\(label): a key for 0x\(String(handle, radix: 16)) (phone \(String(describing: phone)))")
                    }
                case .rejectLongTermKeyRequest(let handle):
                    ltkAnswers += 1
                    guard handle == ltk else { throw Failure("\(label): a refusal nobody asked for") }
                case .disconnect(let handle):
                    // The controller's Disconnection Complete follows, after these actions.
                    closing.append(handle)
                    if handle == phone { phone = nil }
                case .finished(let outcome):
                    guard finished == nil else { throw Failure("\(label): a second outcome \(outcome)") }
                    switch outcome {
                    case .enrolled(let method, _), .pairedWithoutIdentity(let method):
                        guard method == session.configuration.method else { throw Failure("\(label): paired by \(method)") }
                    default:
                        break
                    }
                    finished = outcome
                case .turnedAway:
                    guard finished == nil else { throw Failure("\(label): a central turned away after the end") }
                case .startAdvertising, .stopAdvertising, .compareNumericValue:
                    break
                }
            }
            if ltk != nil, ltkAnswers != 1 { throw Failure("\(label): \(ltkAnswers) answers to one LTK request") }
        }

        /// Data path actions to the session, as `EnrollSession.peripheral` routes them.
        func route(_ actions: [LEDataPath.Action]) throws {
            for action in actions {
                switch action {
                case .peripheralConnected(let complete):
                    try check(session.peripheralConnected(complete, now: now))
                case .securityManager(let handle, let pdu):
                    try check(session.securityManagerPDU(pdu, handle: handle, now: now))
                case .longTermKeyRequested(let request):
                    try check(session.longTermKeyRequested(request, now: now), answering: request.connectionHandle)
                case .rejectLongTermKeyRequest(let handle):
                    try check([.rejectLongTermKeyRequest(handle)], answering: handle)
                case .encryptionChanged(let handle, let status, let enabled):
                    try check(session.encryptionChanged(handle: handle, status: status, enabled: enabled, now: now))
                case .connectionClosed(let handle, _):
                    try check(session.connectionClosed(handle: handle, now: now))
                default:
                    break
                }
            }
        }

        try check(session.start(now: now))
        for step in 0 ..< Int.random(in: 1 ... 40, using: &random) {
            let handle = Self.handles.randomElement(using: &random)!
            // Most cases start with a phone connected, so that pairings get under way.
            switch step == 0 && random.next() % 4 != 0 ? 0 : Int.random(in: 0 ..< 10, using: &random) {
            case 0:
                try route(path.handle(.leMeta(.connectionComplete(LEConnectionComplete(
                    connectionHandle: handle, role: step == 0 || Bool.random(using: &random) ? .peripheral : .central,
                    peerAddressType: .randomDevice, peerAddress: BluetoothAddress(rawValue: random.next() & 0xFFFF_FFFF_FFFF)))), now: now))
            case 1, 2, 3:
                var pdu = Bool.random(using: &random) ? Self.requests.randomElement(using: &random)! : lastSMP
                switch Int.random(in: 0 ..< 4, using: &random) {
                case 0: pdu = random.bytes(Int.random(in: 0 ... 70, using: &random))
                case 1 where !pdu.isEmpty: pdu[Int.random(in: 0 ..< pdu.count, using: &random)] = UInt8.random(in: 0 ... 255, using: &random)
                case 2: pdu = Array(pdu.prefix(Int.random(in: 0 ... pdu.count, using: &random)))
                default: pdu = [UInt8.random(in: 0x01 ... 0x0E, using: &random)] + random.bytes(Int.random(in: 0 ... 65, using: &random))
                }
                lastSMP = pdu
                let bytes = L2CAPBasicFrame(connectionHandle: handle, channel: .securityManager, payload: pdu).bytes
                try route(path.receiveACL(ACLDataHeader.packet(handle: handle, boundary: .firstFlushable, data: bytes[...]), now: now))
            case 4:
                try route(path.handle(.leMeta(.longTermKeyRequest(LELongTermKeyRequest(
                    connectionHandle: handle, randomNumber: Bool.random(using: &random) ? 0 : random.next(),
                    encryptedDiversifier: Bool.random(using: &random) ? 0 : UInt16.random(in: 0 ... 0xFFFF, using: &random)))), now: now))
            case 5:
                try route(path.handle(.encryptionChange(HCIEncryptionChange(
                    status: Bool.random(using: &random) ? .success : HCIStatus(rawValue: 0x06), connectionHandle: handle,
                    encryptionEnabled: UInt8.random(in: 0 ... 1, using: &random))), now: now))
            case 6:
                try route(path.handle(.disconnectionComplete(HCIDisconnectionComplete(
                    connectionHandle: handle, reason: .connectionTimeout)), now: now))
            case 7:
                try check(session.numericComparisonAnswered(matches: Bool.random(using: &random), now: now))
            default:
                now = now + .milliseconds(Int64.random(in: 0 ... 40_000, using: &random))
                if let deadline = session.nextDeadline, deadline <= now { try check(session.timerFired(now: now)) }
            }
            if let deadline = session.nextDeadline, deadline < now, !session.isFinished {
                // A deadline passed without the timer being called: call it as the driver would.
                try check(session.timerFired(now: now))
            }
            while !closing.isEmpty {
                let handle = closing.removeFirst()
                try route(path.handle(.disconnectionComplete(HCIDisconnectionComplete(connectionHandle: handle, reason: .localHostTerminated)),
                                      now: now))
            }
        }
        // The window always ends.
        now = now + .seconds(200)
        try check(session.timerFired(now: now))
        guard let finished else { throw Failure("\(label): the window never ended") }
        XCTAssertNil(session.nextDeadline, label)
        // The outcome's kind, e.g. failed(refused(numericValueRejected)) without its details;
        // for a window that ran out, how its last phone failed.
        func kind(_ value: Any) -> String { String("\(value)".prefix(while: { $0 != ":" }).prefix(48)) }
        if case .windowEnded(let failure) = finished {
            let last: Any? = if case .pairingFailed(let pairing)? = failure { pairing } else { failure }
            return last.map { "windowEnded after " + kind($0) } ?? "windowEnded"
        }
        return kind(finished)
    }

    private struct Failure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }
}
