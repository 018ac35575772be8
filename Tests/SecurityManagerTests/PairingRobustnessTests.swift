import BluetoothCrypto
import EventLoop
import HCI
@testable import SecurityManager
import SplitMix
import XCTest

/// A hostile or broken central: genuine pairing steps mixed with mutated, truncated,
/// extended and random PDUs, controller events at the wrong moments, the person's
/// answer at random, and time jumps; in random order. Nothing may trap, every input gets
/// a bounded answer, every PDU we send is well formed, and the rules that make the link
/// safe hold (no SMP after the timeout, no keys after a failure). Every third case starts
/// from one of the scripted attacks (`PairingAttack.all`): a quarter of those run as
/// scripted and must end as the attack says, the rest with hostile inputs mixed in.
final class PairingRobustnessTests: XCTestCase {
    func testHostileCentralsNeverBreakTheResponder() {
        let seed = UInt64(ProcessInfo.processInfo.environment["BEACON_GATEWAY_FUZZ_SEED"].flatMap { UInt64($0) } ?? 0x5A17_22E5)
        let cases = ProcessInfo.processInfo.environment["BEACON_GATEWAY_FUZZ_CASES"].flatMap { Int($0) } ?? 3000
        var random = SplitMix64(seed: seed)
        var outcomes = [String: Int]()
        var seeded = 0
        let attacks = PairingAttack.all
        for index in 0 ..< cases {
            let caseSeed = random.next()
            let attack = index % 3 == 0 ? attacks[(index / 3) % attacks.count] : nil
            let scripted = attack != nil && (index / 3) % 4 == 0
            if attack != nil { seeded += 1 }
            outcomes[runCase(seed: caseSeed, index: index, attack: attack, scripted: scripted), default: 0] += 1
        }
        print("pairing robustness: \(cases) cases (\(seeded) from \(attacks.count) scripted attacks), seed \(seed): "
            + "\(outcomes.sorted { $0.key < $1.key })")
        // The mix reaches every end: completed pairings, refusals, peer failures, timeouts.
        XCTAssertGreaterThan(outcomes["paired", default: 0], 0, "\(outcomes)")
        XCTAssertGreaterThan(outcomes["refused", default: 0], 0, "\(outcomes)")
        XCTAssertGreaterThan(outcomes["timedOut", default: 0], 0, "\(outcomes)")
        XCTAssertGreaterThan(outcomes["peerFailed", default: 0], 0, "\(outcomes)")
    }

    /// One central against one responder, from `attack` when given (exactly as scripted
    /// when `scripted`); returns how it ended.
    private func runCase(seed: UInt64, index: Int, attack: PairingAttack? = nil, scripted: Bool = false) -> String {
        var random = SplitMix64(seed: seed)
        let numeric = attack.map { $0.method == .numericComparison } ?? (random.next() % 2 == 0)
        // Now and then a phone with the debug key, which never pairs.
        let debugKey = attack?.debugKey ?? (random.next() % 16 == 0)
        let accepts = random.next() % 16 != 0 || attack != nil
        let ioCapability = attack?.ioCapability ?? IOCapability(rawValue: UInt8(random.next() % 5))
        var run = PairingRun(responder: Fixture.responder(method: numeric ? .numericComparison : .justWorks, acceptsPairing: accepts),
                             phone: ScriptedInitiator(ioCapability: ioCapability,
                                                      authentication: attack?.authentication ?? [.bonding, .mitm, .secureConnections],
                                                      keyPair: debugKey ? Fixture.debugKeyPair : P256KeyPair.generate()!))
        // Mostly genuine early on, so the deep states are reached too.
        let drawn = Int(random.next() % (random.next() % 3 == 0 ? 8 : 60))
        let hostility = scripted ? 0 : attack != nil ? drawn % 8 : drawn
        var firstFailure: PairingFailure?
        var result: PairingResult?
        var genuineStep = 0
        var ending = "open"
        var timedOut = false
        var ended = false
        var paired = false
        for _ in 0 ..< 24 {
            let actions: [PairingAction]
            let roll = Int(random.next() % 100)
            if roll >= hostility {
                actions = attack.map { next(&run, $0, step: genuineStep) } ?? genuine(&run, step: genuineStep)
                genuineStep += 1
            } else if roll % 10 < 5 {
                actions = run.feed(mutated(genuinePDU(run.phone, Int(random.next() % 6)), &random))
            } else if roll % 10 == 5 {
                actions = run.feed(random.bytes(Int(random.next() % 70)))
            } else if roll % 10 == 6 {
                run.now += .seconds(Int64(random.next() % 40))
                actions = run.responder.timerFired(now: run.now)
            } else if roll % 10 == 7 {
                actions = run.responder.longTermKeyRequested(random: random.next() % 3, encryptedDiversifier: UInt16(random.next() % 2),
                                                             now: run.now)
            } else if roll % 10 == 8 {
                actions = run.responder.encryptionChanged(status: HCIStatus(rawValue: UInt8(random.next() % 2 == 0 ? 0 : random.next() % 64)),
                                                          enabled: random.next() % 4 != 0, now: run.now)
            } else {
                switch random.next() % 8 {
                case 0: actions = run.responder.linkClosed()
                case 1, 2: actions = run.feed([SMPCode.pairingFailed.rawValue, UInt8(random.next() % 16)])
                case 3: actions = run.responder.requestSecurity(now: run.now)
                default: actions = run.responder.numericComparisonAnswered(matches: random.next() % 4 != 0, now: run.now)
                }
            }
            let context = "case \(index) (seed \(seed))"
            XCTAssertLessThanOrEqual(actions.count, 6, context)
            for pdu in actions.sent {
                XCTAssertEqual(SMPCode(rawValue: pdu[0]).pduLength, pdu.count, "a malformed PDU of ours: \(pdu), \(context)")
                XCTAssertFalse(timedOut, "SMP after the timeout, \(context)")
                // Feed what we send back into the phone, as a real one would take it.
                switch SMPCode(rawValue: pdu[0]) {
                case .pairingResponse: _ = run.phone.take(response: pdu)
                case .pairingPublicKey: _ = run.phone.take(publicKey: pdu)
                case .pairingConfirm: _ = run.phone.take(confirm: pdu)
                case .pairingRandom: _ = run.phone.take(random: pdu)
                default: break
                }
            }
            if actions.contains(.replyLongTermKey(run.phone.ltk ?? SecretKey128(.zero))) == false,
               actions.contains(where: { if case .replyLongTermKey = $0 { true } else { false } }) {
                XCTFail("an LTK the phone did not derive, \(context)")
            }
            if let completed = actions.result {
                result = completed
                XCTAssertEqual(completed.method, run.responder.configuration.method, "only the method asked for, \(context)")
                XCTAssertFalse(debugKey, "a pairing with the debug key, \(context)")
                XCTAssertFalse(ended || paired, "keys after the pairing ended, \(context)")
                paired = true
                ending = "paired"
            }
            if let failure = actions.failure, run.responder.configuration.acceptsPairing {
                firstFailure = firstFailure ?? failure
                XCTAssertFalse(paired && failure != .linkClosed, "a failure after the pairing completed, \(context)")
                ended = true
                switch failure {
                case .refused: ending = "refused"
                case .peerFailed: ending = "peerFailed"
                case .timedOut: ending = "timedOut"; timedOut = true
                case .encryptionFailed: ending = "encryptionFailed"
                case .linkClosed: ending = "linkClosed"
                }
            }
            XCTAssertEqual(run.responder.nextDeadline != nil, run.responder.isPairing, context)
        }
        if let attack, scripted {
            let context = "\(attack.name): case \(index) (seed \(seed))"
            XCTAssertEqual(firstFailure, attack.failure, context)
            if attack.failure == nil {
                XCTAssertNotNil(result?.peerIdentity, context)
                XCTAssertEqual(result?.peerIdentity?.irk == nil, attack.withoutIRK, context)
            } else {
                XCTAssertNil(result, "paired in spite of the attack, \(context)")
            }
        }
        return ending
    }

    /// The next input of a scripted attack; nothing once its script is over.
    private func next(_ run: inout PairingRun, _ attack: PairingAttack, step: Int) -> [PairingAction] {
        guard step < attack.inputs.count else { return [] }
        switch attack.inputs[step] {
        case .genuine(let genuineStep): return genuine(&run, step: genuineStep)
        case .pdu(let make): return run.feed(make(run.phone))
        case .answer(let matches): return run.responder.numericComparisonAnswered(matches: matches, now: run.now)
        }
    }

    /// The next step of a genuine Just Works or Numeric Comparison pairing: the phone's
    /// PDUs, the person's yes, the controller's events.
    private func genuine(_ run: inout PairingRun, step: Int) -> [PairingAction] {
        switch step {
        case 3: run.responder.numericComparisonAnswered(matches: true, now: run.now)
        case 5: run.responder.longTermKeyRequested(random: 0, encryptedDiversifier: 0, now: run.now)
        case 6: run.responder.encryptionChanged(status: .success, enabled: true, now: run.now)
        case 0, 1, 2: run.feed(genuinePDU(run.phone, step))
        case 4: run.feed(genuinePDU(run.phone, 3))
        case 7, 8: run.feed(genuinePDU(run.phone, step - 3))
        default: run.feed([SMPCode.pairingFailed.rawValue, UInt8(step % 14)])
        }
    }

    private func genuinePDU(_ phone: ScriptedInitiator, _ index: Int) -> [UInt8] {
        switch index {
        case 0: phone.pairingRequest
        case 1: phone.publicKey
        case 2: phone.random
        case 3: phone.dhKeyCheck
        case 4: phone.identityInformation
        default: phone.identityAddressInformation
        }
    }

    private func mutated(_ pdu: [UInt8], _ random: inout SplitMix64) -> [UInt8] {
        var pdu = pdu
        switch random.next() % 4 {
        case 0 where !pdu.isEmpty:
            let bit = Int(random.next() % UInt64(pdu.count * 8))
            pdu[bit / 8] ^= 1 << UInt8(bit % 8)
        case 1 where !pdu.isEmpty:
            pdu.removeLast(Int(random.next() % UInt64(pdu.count)) + 1)
        case 2:
            pdu.append(contentsOf: random.bytes(Int(random.next() % 4) + 1))
        default:
            if !pdu.isEmpty { pdu[0] = UInt8(truncatingIfNeeded: random.next() % 17) }
        }
        return pdu
    }
}
