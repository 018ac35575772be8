import BluetoothCrypto
import EventLoop
import HCI
@testable import SecurityManager
import XCTest

final class PairingResponderTests: XCTestCase {
    // MARK: Whole pairings

    func testJustWorksPairingExchangesIdentityKeysBothWays() {
        var run = PairingRun()
        let response = run.features().sent[0]
        // NoInputNoOutput, no OOB, Bonding | SC (no MITM for Just Works), 16 octets, identity keys only.
        XCTAssertEqual(response, [0x02, 0x03, 0x00, 0x09, 0x10, 0x02, 0x02])
        run.publicKeys()
        XCTAssertNil(run.randoms().numericValue, "Just Works shows nothing")
        let eb = run.feed(run.phone.dhKeyCheck)
        XCTAssertEqual(eb.sent.count, 1)
        XCTAssertTrue(run.phone.verifies(dhKeyCheck: eb.sent[0]))

        let keys = run.encrypt()
        // Ours first (§3.6.1): our IRK and identity address, least significant octet first.
        XCTAssertEqual(keys.sent, [[0x08] + Fixture.doorIRK.leastSignificantFirst, [0x09, 0x01, 0x88, 0x77, 0x66, 0x55, 0x44, 0xC3]])
        XCTAssertNil(keys.result)
        XCTAssertTrue(run.feed(run.phone.identityInformation).isEmpty)
        let done = run.feed(run.phone.identityAddressInformation)
        XCTAssertEqual(done, [.armTimer(nil), .paired(PairingResult(method: .justWorks, peerIdentity: PeerIdentity(
            irk: SecretKey128(Fixture.phoneIRK), address: Fixture.phoneIdentity, isRandom: false)))])
        XCTAssertNil(run.responder.nextDeadline)
        // The LTK still answers on this link; a second pairing does not start.
        XCTAssertEqual(run.responder.longTermKeyRequested(random: 0, encryptedDiversifier: 0, now: run.now), [.replyLongTermKey(run.phone.ltk!)])
        XCTAssertEqual(run.feed(run.phone.pairingRequest), [.send([0x05, 0x09])])
    }

    func testJustWorksWithTheSpecificationSampleKeys() throws {
        // The responder's key pair is the sample data's B: the public key it sends is PKb.
        // The phone's is not the sample data's A, which is the debug key the responder
        // refuses (below): it is SHA-256("beacon-gateway sample phone key").
        let keyB = try XCTUnwrap(P256KeyPair(privateKey: Octets256(mostSignificantFirst: hex(
            "55188b3d32f6bb9a900afcfbeed4e72a59cb9ac2f19d7cfb6b4fdd49f47fc5fd"))!))
        let keyA = try XCTUnwrap(P256KeyPair(privateKey: Octets256(mostSignificantFirst: hex(
            "721b61d16a57b0e14b8de65900309e720c09eb483273b9432ea9b67e25559150"))!))
        let nb = Octets128(mostSignificantFirst: hex("a6e8e7cc25a75f6e216583f7ff3dc4cf"))!
        var run = PairingRun(responder: Fixture.responder(secrets: FixedSecrets(pair: keyB, fixedNonce: nb)),
                             phone: ScriptedInitiator(keyPair: keyA, nonce: Octets128(mostSignificantFirst: hex("d5cb8454d177733effffb2ec712baeab"))!))
        run.features()
        let sent = run.publicKeys().sent
        XCTAssertEqual(Array(sent[0].prefix(5)), [0x0C, 0x90, 0xA1, 0xAA, 0x2F], "PKbx, least significant octet first")
        // Cb, Ea, Eb and the LTK as Bumble's SMP functions compute them for this exchange
        // (addresses and IO capabilities of the fixture, wire order): a second
        // implementation, so a byte-order mistake shared by responder and scripted phone
        // cannot hide.
        XCTAssertEqual(sent[1], [0x03] + hex("27d8557e23b16ff39b61bf2afac5e7de"))
        run.randoms()
        XCTAssertEqual(run.phone.dhKeyCheck, [0x0D] + hex("afd6343c1d35cfdb4c444c8f2cc2c6e9"))
        XCTAssertEqual(run.feed(run.phone.dhKeyCheck).sent, [[0x0D] + hex("2422de37d43bf2f94591e582eed47db7")])
        XCTAssertEqual(run.responder.longTermKeyRequested(random: 0, encryptedDiversifier: 0, now: run.now),
                       [.replyLongTermKey(SecretKey128(Octets128(leastSignificantFirst: hex("e2fd343dba20d1bd6f524339c8af0028"))!))])

        var numeric = PairingRun(responder: Fixture.responder(method: .numericComparison,
                                                              secrets: FixedSecrets(pair: keyB, fixedNonce: nb)),
                                 phone: ScriptedInitiator(ioCapability: .displayYesNo, keyPair: keyA, nonce: run.phone.nonce))
        numeric.features()
        numeric.publicKeys()
        XCTAssertEqual(numeric.randoms().numericValue, 691_901, "g2 mod 10^6, as Bumble computes it")
    }

    func testTheDebugPublicKeyIsRefused() {
        // The sample data's A (Core Vol 3 Part H §2.3.5.6.1): its private key is published.
        let debug = Fixture.debugKeyPair
        XCTAssertEqual(debug.publicKey, P256PublicKey.smpDebugKey)
        var run = PairingRun(phone: ScriptedInitiator(keyPair: debug))
        run.features()
        XCTAssertEqual(run.feed(run.phone.publicKey), [.send([0x05, 0x08]), .armTimer(nil), .failed(.refused(.debugPublicKey))])
        XCTAssertFalse(run.responder.isPairing)
    }

    func testNumericComparisonConfirmedAfterThePhoneCheck() {
        var run = PairingRun(responder: Fixture.responder(method: .numericComparison), phone: ScriptedInitiator(ioCapability: .displayYesNo))
        // DisplayYesNo and MITM: Numeric Comparison.
        XCTAssertEqual(run.features().sent[0], [0x02, 0x01, 0x00, 0x0D, 0x10, 0x02, 0x02])
        run.publicKeys()
        let value = run.randoms().numericValue
        XCTAssertEqual(value, run.phone.numericValue, "both screens show the same six digits")
        XCTAssertLessThan(value ?? .max, 1_000_000)
        // The phone's user said yes first: Eb waits for ours.
        XCTAssertTrue(run.feed(run.phone.dhKeyCheck).sent.isEmpty)
        XCTAssertEqual(run.responder.longTermKeyRequested(random: 0, encryptedDiversifier: 0, now: run.now), [.rejectLongTermKeyRequest])
        let eb = run.responder.numericComparisonAnswered(matches: true, now: run.now)
        XCTAssertTrue(run.phone.verifies(dhKeyCheck: eb.sent.first ?? []))
        XCTAssertTrue(run.encrypt().sent.count == 2)
        _ = run.feed(run.phone.identityInformation)
        XCTAssertEqual(run.feed(run.phone.identityAddressInformation).result?.method, .numericComparison)
    }

    func testNumericComparisonConfirmedBeforeThePhoneCheck() {
        var run = PairingRun(responder: Fixture.responder(method: .numericComparison), phone: ScriptedInitiator(ioCapability: .keyboardDisplay))
        run.features()
        run.publicKeys()
        XCTAssertNotNil(run.randoms().numericValue)
        XCTAssertTrue(run.responder.numericComparisonAnswered(matches: true, now: run.now).isEmpty)
        XCTAssertTrue(run.phone.verifies(dhKeyCheck: run.feed(run.phone.dhKeyCheck).sent.first ?? []))
    }

    func testNumericComparisonRejected() {
        var run = PairingRun(responder: Fixture.responder(method: .numericComparison), phone: ScriptedInitiator(ioCapability: .displayYesNo))
        run.features()
        run.publicKeys()
        run.randoms()
        let actions = run.responder.numericComparisonAnswered(matches: false, now: run.now)
        XCTAssertEqual(actions, [.send([0x05, 0x0C]), .armTimer(nil), .failed(.refused(.numericValueRejected))])
        XCTAssertTrue(run.feed(run.phone.dhKeyCheck).isEmpty, "nothing more after the pairing ended")
        XCTAssertEqual(run.responder.longTermKeyRequested(random: 0, encryptedDiversifier: 0, now: run.now), [.rejectLongTermKeyRequest])
    }

    func testAPhoneThatCannotCompareDigitsIsRefusedNotPairedByJustWorks() {
        for capability in [IOCapability.noInputNoOutput, .displayOnly, .keyboardOnly] {
            var run = PairingRun(responder: Fixture.responder(method: .numericComparison), phone: ScriptedInitiator(ioCapability: capability))
            // Authentication Requirements (0x03): the IO capabilities cannot meet what is asked.
            XCTAssertEqual(run.feed(run.phone.pairingRequest),
                           [.send([0x05, 0x03]), .failed(.refused(.cannotCompareDigits(capability)))], "\(capability)")
            XCTAssertFalse(run.responder.isPairing)
            XCTAssertEqual(run.responder.longTermKeyRequested(random: 0, encryptedDiversifier: 0, now: run.now), [.rejectLongTermKeyRequest])
            XCTAssertEqual(run.feed(run.phone.publicKey), [], "nothing of a pairing follows")
        }
        XCTAssertEqual(PairingRefusal.cannotCompareDigits(.noInputNoOutput).reason, .authenticationRequirements)
    }

    func testAJustWorksWindowPairsEveryPhoneByJustWorks() {
        // Asked for knowingly: NoInputNoOutput answered to any phone, so a phone with a
        // display pairs without digits and a keyboard-only one is not asked for a passkey.
        for capability in [IOCapability.displayYesNo, .keyboardDisplay, .keyboardOnly, .displayOnly, .noInputNoOutput] {
            var run = PairingRun(phone: ScriptedInitiator(ioCapability: capability))
            XCTAssertEqual(run.features().sent[0], [0x02, 0x03, 0x00, 0x09, 0x10, 0x02, 0x02], "\(capability)")
            run.publicKeys()
            XCTAssertNil(run.randoms().numericValue)
            XCTAssertEqual(run.feed(run.phone.dhKeyCheck).sent.count, 1)
            _ = run.encrypt()
            _ = run.feed(run.phone.identityInformation)
            XCTAssertEqual(run.feed(run.phone.identityAddressInformation).result?.method, .justWorks)
        }
    }

    func testNoIdentityKeysOfferedCompletesAtEncryption() {
        var run = PairingRun(phone: ScriptedInitiator(keyDistribution: []))
        XCTAssertEqual(run.features().sent[0], [0x02, 0x03, 0x00, 0x09, 0x10, 0x00, 0x00])
        run.publicKeys()
        run.randoms()
        _ = run.feed(run.phone.dhKeyCheck)
        XCTAssertEqual(run.encrypt(), [.armTimer(nil), .paired(PairingResult(method: .justWorks, peerIdentity: nil))])
    }

    func testAllZeroIRKMeansThePhoneHasNone() {
        var run = keysPhase()
        _ = run.feed([0x08] + [UInt8](repeating: 0, count: 16))
        let identity = run.feed(run.phone.identityAddressInformation).result?.peerIdentity
        XCTAssertEqual(identity, PeerIdentity(irk: nil, address: Fixture.phoneIdentity, isRandom: false))
    }

    func testStaticRandomIdentityAddressIsTaken() {
        var run = keysPhase()
        _ = run.feed(run.phone.identityInformation)
        let identity = run.feed([0x09, 0x01, 0x06, 0x05, 0x04, 0x03, 0x02, 0xC1]).result?.peerIdentity
        XCTAssertEqual(identity?.address, BluetoothAddress("C1:02:03:04:05:06"))
        XCTAssertEqual(identity?.isRandom, true)
    }

    // MARK: Refusals

    func testLegacyPairingIsRefused() {
        var run = PairingRun(phone: ScriptedInitiator(authentication: [.bonding, .mitm]))
        XCTAssertEqual(run.feed(run.phone.pairingRequest), [.send([0x05, 0x03]), .failed(.refused(.legacyPairing))])
        XCTAssertFalse(run.responder.isPairing)
    }

    func testOnePairingPerLink() {
        var run = PairingRun(phone: ScriptedInitiator(authentication: [.bonding]))
        XCTAssertEqual(run.feed(run.phone.pairingRequest).failure, .refused(.legacyPairing))
        XCTAssertEqual(run.feed(ScriptedInitiator().pairingRequest), [.send([0x05, 0x09])], "Repeated Attempts, nothing more")
        XCTAssertEqual(run.responder.linkClosed(), [])
        XCTAssertTrue(run.feed(ScriptedInitiator().pairingRequest).isEmpty, "nothing after the link closed")
    }

    func testPairingNotSupportedOutsideEnrolment() {
        var run = PairingRun(responder: Fixture.responder(acceptsPairing: false))
        XCTAssertEqual(run.feed(run.phone.pairingRequest), [.send([0x05, 0x05]), .failed(.refused(.pairingNotAccepted))])
        XCTAssertEqual(run.feed(run.phone.pairingRequest).sent, [[0x05, 0x05]], "every request, every time")
        XCTAssertTrue(run.responder.requestSecurity(now: run.now).isEmpty)
    }

    func testPairingRequestFieldChecks() {
        func refusal(_ request: [UInt8]) -> [PairingAction] {
            var responder = Fixture.responder()
            return responder.receive(request, now: .zero)
        }
        XCTAssertEqual(refusal([0x01, 0x03, 0x00, 0x09, 0x0F, 0x02, 0x02]), [.send([0x05, 0x06]), .failed(.refused(.encryptionKeyTooShort(15)))])
        XCTAssertEqual(refusal([0x01, 0x03, 0x01, 0x09, 0x10, 0x02, 0x02]), [.send([0x05, 0x02]), .failed(.refused(.outOfBandRequested))])
        XCTAssertEqual(refusal([0x01, 0x05, 0x00, 0x09, 0x10, 0x02, 0x02]).sent, [[0x05, 0x0A]], "reserved IO capability")
        XCTAssertEqual(refusal([0x01, 0x03, 0x02, 0x09, 0x10, 0x02, 0x02]).sent, [[0x05, 0x0A]], "reserved OOB flag")
        XCTAssertEqual(refusal([0x01, 0x03, 0x00, 0x09, 0x06, 0x02, 0x02]).sent, [[0x05, 0x0A]], "key size below 7")
        XCTAssertEqual(refusal([0x01, 0x03, 0x00, 0x09, 0x11, 0x02, 0x02]).sent, [[0x05, 0x0A]], "key size above 16")
        XCTAssertEqual(refusal([0x01, 0x03, 0x00, 0x09, 0x10, 0x02]), [.send([0x05, 0x0A])], "short: no pairing began")
        // Reserved bits are ignored: AuthReq 0xC9, key distribution 0xF3.
        XCTAssertEqual(refusal([0x01, 0x03, 0x00, 0xC9, 0x10, 0xF3, 0xF3]).sent, [[0x02, 0x03, 0x00, 0x09, 0x10, 0x02, 0x02]])
    }

    func testPublicKeyOffTheCurveIsRefused() {
        var run = PairingRun()
        run.features()
        var key = run.phone.publicKey
        key[64] ^= 0x01
        XCTAssertEqual(run.feed(key), [.send([0x05, 0x0B]), .armTimer(nil), .failed(.refused(.invalidPublicKey))])
        XCTAssertEqual(run.responder.longTermKeyRequested(random: 0, encryptedDiversifier: 0, now: run.now), [.rejectLongTermKeyRequest])
    }

    func testReflectedPublicKeyIsRefused() {
        let pair = P256KeyPair.generate()!
        var run = PairingRun(responder: Fixture.responder(secrets: FixedSecrets(pair: pair, fixedNonce: .zero)),
                             phone: ScriptedInitiator(keyPair: pair))
        run.features()
        XCTAssertEqual(run.feed(run.phone.publicKey).failure, .refused(.reflectedPublicKey))
    }

    func testWrongDHKeyCheckIsRefused() {
        var run = PairingRun()
        run.features()
        run.publicKeys()
        run.randoms()
        var check = run.phone.dhKeyCheck
        check[16] ^= 0x80
        XCTAssertEqual(run.feed(check), [.send([0x05, 0x0B]), .armTimer(nil), .failed(.refused(.dhKeyCheckMismatch))])
    }

    func testTamperedConfirmIsCaughtByThePhone() {
        // A man in the middle changes our confirm value: the phone's check of our random
        // fails and it sends Confirm Value Failed, which ends the pairing here.
        var run = PairingRun()
        run.features()
        var sent = run.feed(run.phone.publicKey).sent
        sent[1][3] ^= 0x01
        XCTAssertTrue(run.phone.take(publicKey: sent[0]))
        XCTAssertTrue(run.phone.take(confirm: sent[1]))
        XCTAssertFalse(run.phone.take(random: run.feed(run.phone.random).sent[0]))
        XCTAssertEqual(run.feed([0x05, 0x04]), [.armTimer(nil), .failed(.peerFailed(.confirmValueFailed))])
    }

    func testOutOfOrderCommandsAreRefused() {
        var run = PairingRun()
        run.features()
        XCTAssertEqual(run.feed(run.phone.random).failure, .refused(.unexpected(.pairingRandom)))
        XCTAssertEqual(run.responder.counters.refusals, 1)

        run = PairingRun()
        run.features()
        run.publicKeys()
        // An initiator never sends a confirm in Just Works or Numeric Comparison.
        XCTAssertEqual(run.feed([0x03] + [UInt8](repeating: 7, count: 16)), [.send([0x05, 0x08]), .armTimer(nil),
                                                                            .failed(.refused(.unexpected(.pairingConfirm)))])

        run = PairingRun()
        run.features()
        XCTAssertEqual(run.feed(run.phone.pairingRequest).failure, .refused(.unexpected(.pairingRequest)))

        // Keys before encryption.
        run = PairingRun()
        run.features()
        run.publicKeys()
        run.randoms()
        XCTAssertEqual(run.feed(run.phone.identityInformation).failure, .refused(.unexpected(.identityInformation)))

        // Address before IRK (§3.6.1 orders them).
        run = keysPhase()
        XCTAssertEqual(run.feed(run.phone.identityAddressInformation).failure, .refused(.unexpected(.identityAddressInformation)))
    }

    func testMalformedAndUnsupportedCommands() {
        var run = PairingRun()
        run.features()
        XCTAssertEqual(run.feed(Array(run.phone.publicKey.dropLast())).failure, .refused(.invalidParameters(.pairingPublicKey)))

        for (pdu, refusal) in [([UInt8](), PairingRefusal.invalidParameters(nil)), ([0x0F], .unsupported(SMPCode(rawValue: 0x0F))),
                               ([0x02, 0x03, 0x00, 0x09, 0x10, 0x02, 0x02], .unsupported(.pairingResponse)),
                               ([0x0B, 0x09], .unsupported(.securityRequest)), ([0x0E, 0x00], .unsupported(.pairingKeypressNotification)),
                               ([0x06] + [UInt8](repeating: 0, count: 16), .unexpected(.encryptionInformation))] {
            var run = PairingRun()
            run.features()
            XCTAssertEqual(run.feed(pdu), [.send([0x05, refusal.reason.rawValue]), .armTimer(nil), .failed(.refused(refusal))], "\(pdu)")
        }

        // Idle: answered, but there is no pairing to end and a genuine one may follow.
        run = PairingRun()
        XCTAssertEqual(run.feed([0x0F, 0x01]), [.send([0x05, 0x07])])
        XCTAssertEqual(run.feed([0x04, 0x01]), [.send([0x05, 0x0A])])
        XCTAssertEqual(run.feed(run.phone.random), [.send([0x05, 0x08])])
        XCTAssertEqual(run.feed([0x05, 0x08]), [], "a Pairing Failed is never answered")
        run.features()
    }

    func testBadIdentityAddressIsRefused() {
        for address in [[0x09, 0x02, 1, 2, 3, 4, 5, 0xC6], [0x09, 0x01, 1, 2, 3, 4, 5, 0x46]] as [[UInt8]] {
            var run = keysPhase()
            _ = run.feed(run.phone.identityInformation)
            XCTAssertEqual(run.feed(address).failure, .refused(.invalidParameters(.identityAddressInformation)), "\(address)")
        }
    }

    func testLongTermKeyOnlyForZeroDiversifierAndRandom() {
        var run = PairingRun()
        run.features()
        XCTAssertEqual(run.responder.longTermKeyRequested(random: 0, encryptedDiversifier: 0, now: run.now), [.rejectLongTermKeyRequest])
        run.publicKeys()
        run.randoms()
        _ = run.feed(run.phone.dhKeyCheck)
        XCTAssertEqual(run.responder.longTermKeyRequested(random: 1, encryptedDiversifier: 0, now: run.now), [.rejectLongTermKeyRequest])
        XCTAssertEqual(run.responder.longTermKeyRequested(random: 0, encryptedDiversifier: 7, now: run.now), [.rejectLongTermKeyRequest])
        XCTAssertEqual(run.responder.longTermKeyRequested(random: 0, encryptedDiversifier: 0, now: run.now), [.replyLongTermKey(run.phone.ltk!)])
    }

    func testEncryptionFailureEndsThePairing() {
        var run = PairingRun()
        run.features()
        run.publicKeys()
        run.randoms()
        _ = run.feed(run.phone.dhKeyCheck)
        XCTAssertEqual(run.responder.encryptionChanged(status: .success, enabled: false, now: run.now).failure,
                       .encryptionFailed(.success, enabled: false))
        var other = PairingRun()
        other.features()
        other.publicKeys()
        other.randoms()
        _ = other.feed(other.phone.dhKeyCheck)
        let mic = HCIStatus(rawValue: 0x3D)
        XCTAssertEqual(other.responder.encryptionChanged(status: mic, enabled: false, now: other.now),
                       [.armTimer(nil), .failed(.encryptionFailed(mic, enabled: false))])
    }

    func testLinkLostBeforeThePhoneIdentity() {
        var run = keysPhase()
        XCTAssertEqual(run.responder.linkClosed(), [.armTimer(nil), .failed(.linkClosed)])
        XCTAssertTrue(run.feed(run.phone.identityInformation).isEmpty)
    }

    func testSecurityRequest() {
        var justWorks = Fixture.responder()
        XCTAssertEqual(justWorks.requestSecurity(now: .zero), [.send([0x0B, 0x09])])
        var numeric = Fixture.responder(method: .numericComparison)
        XCTAssertEqual(numeric.requestSecurity(now: .zero), [.send([0x0B, 0x0D])])
        XCTAssertNil(numeric.nextDeadline, "the SMP timer starts with the Pairing Request (§3.4)")
        var run = PairingRun()
        run.features()
        XCTAssertTrue(run.responder.requestSecurity(now: run.now).isEmpty, "not while pairing")
    }

    // MARK: The SMP timer

    func testTimeoutEndsSMPOnTheLink() {
        var run = PairingRun()
        run.features()
        let deadline = run.responder.nextDeadline!
        XCTAssertEqual(deadline, run.now + .seconds(30))
        XCTAssertTrue(run.responder.timerFired(now: deadline - .milliseconds(1)).isEmpty)
        // Each command we send restarts it.
        run.now += .seconds(20)
        run.publicKeys()
        XCTAssertEqual(run.responder.nextDeadline, run.now + .seconds(30))
        XCTAssertTrue(run.responder.timerFired(now: deadline).isEmpty)
        // A phone that stalls (the person never taps).
        let stalled = run.responder.nextDeadline!
        XCTAssertEqual(run.responder.timerFired(now: stalled), [.armTimer(nil), .failed(.timedOut)])
        XCTAssertTrue(run.feed(run.phone.random).isEmpty, "no SMP after the timeout")
        XCTAssertTrue(run.feed(run.phone.pairingRequest).isEmpty, "not even a new pairing")
        XCTAssertEqual(run.responder.longTermKeyRequested(random: 0, encryptedDiversifier: 0, now: run.now), [.rejectLongTermKeyRequest])
        XCTAssertEqual(run.responder.counters.ignored, 2)
    }

    func testTimeoutWhileTheNumericValueIsCompared() {
        var run = PairingRun(responder: Fixture.responder(method: .numericComparison), phone: ScriptedInitiator(ioCapability: .displayYesNo))
        run.features()
        run.publicKeys()
        run.randoms()
        _ = run.feed(run.phone.dhKeyCheck)
        let deadline = run.responder.nextDeadline!
        XCTAssertEqual(run.responder.timerFired(now: deadline).failure, .timedOut)
        XCTAssertTrue(run.responder.numericComparisonAnswered(matches: true, now: deadline).isEmpty, "too late")
    }

    // MARK: Secrets

    func testNoDescriptionShowsAKey() {
        var run = keysPhase()
        _ = run.feed(run.phone.identityInformation)
        let done = run.feed(run.phone.identityAddressInformation)
        let ltk = run.responder.longTermKeyRequested(random: 0, encryptedDiversifier: 0, now: run.now)
        var dumped = ""
        dump(run.responder, to: &dumped)
        dump(done + ltk, to: &dumped)
        let texts = [dumped, "\(done)", "\(ltk)", String(reflecting: done), String(describing: run.responder)]
        for secret in [Fixture.phoneIRK, run.phone.ltk!.revealed, Fixture.doorIRK] {
            for text in texts {
                XCTAssertFalse(text.contains(secret.description), "a key in: \(text.prefix(200))")
                XCTAssertFalse(text.contains(String(secret.mostSignificantFirst[0])) && text.contains(String(secret.mostSignificantFirst[1]))
                    && text.contains("\(secret.mostSignificantFirst[0]), \(secret.mostSignificantFirst[1])"), "a key's octets in a dump")
            }
        }
    }

    // MARK: Helpers

    /// A Just Works run up to the point the phone distributes its keys.
    private func keysPhase() -> PairingRun {
        var run = PairingRun()
        run.features()
        run.publicKeys()
        run.randoms()
        _ = run.feed(run.phone.dhKeyCheck)
        XCTAssertEqual(run.encrypt().sent.count, 2)
        return run
    }
}

func hex(_ text: String) -> [UInt8] {
    let digits = Array(text.utf8)
    return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(decoding: digits[$0 ..< $0 + 2], as: UTF8.self), radix: 16)! }
}
