import BluetoothCrypto
import EventLoop
import HCI
import SecurityManager
import XCTest
@testable import Enrolment

/// The enrolment window on a virtual clock: advertising, one phone's connection, the
/// Security Request, refusals, the window's end. (A whole pairing against a real phone
/// stack is Tests/Integration/test_enroll.py.)
final class EnrolmentSessionTests: XCTestCase {
    private let phone: UInt16 = 0x0041
    private let door = AddressWithType(BluetoothAddress(rawValue: 0xF0_F1_F2_F3_F4_F5), isRandom: false)
    private let secureRequest: [UInt8] = [0x01, 0x03, 0x00, 0x09, 0x10, 0x02, 0x02]
    private let legacyRequest: [UInt8] = [0x01, 0x03, 0x00, 0x01, 0x10, 0x02, 0x02]

    private func seconds(_ s: Int64) -> Instant { Instant(nanoseconds: s * 1_000_000_000) }

    private func session(window: Duration = .seconds(120), method: PairingMethod = .justWorks) -> EnrolmentSession {
        let identity = PairingResponder.LocalIdentity(irk: SecretKey128(Octets128(mostSignificantFirst: Array(1 ... 16))!), address: door)
        return EnrolmentSession(configuration: .init(window: window, method: method, localIdentity: identity,
                                                     advertisement: EnrolmentAdvertisement(name: "door-1")))
    }

    private func connection(_ handle: UInt16) -> LEConnectionComplete {
        LEConnectionComplete(connectionHandle: handle, role: .peripheral, peerAddressType: .randomDevice,
                             peerAddress: BluetoothAddress(rawValue: 0xC1_22_33_44_55_66))
    }

    func testTheWindowEndsWithNobody() {
        var enrolment = session(window: .seconds(5))
        XCTAssertEqual(enrolment.start(now: .zero), [.delegatePairing(true), .startAdvertising(EnrolmentAdvertisement(name: "door-1"))])
        XCTAssertEqual(enrolment.start(now: .zero), [], "one window per session")
        XCTAssertEqual(enrolment.nextDeadline, seconds(5))
        XCTAssertEqual(enrolment.timerFired(now: seconds(4)), [])
        XCTAssertEqual(enrolment.timerFired(now: seconds(5)), [.delegatePairing(false), .stopAdvertising, .finished(.windowEnded(lastFailure: nil))])
        XCTAssertTrue(enrolment.isFinished)
        XCTAssertNil(enrolment.nextDeadline)
        XCTAssertEqual(enrolment.peripheralConnected(connection(phone), now: seconds(6)), [.disconnect(phone)],
                       "a phone after the window is sent away")
    }

    func testAWindowEndedEarlyStopsWhatItStartedOnce() {
        var advertising = session()
        _ = advertising.start(now: .zero)
        XCTAssertEqual(advertising.end("the agent is stopping", now: seconds(1)),
                       [.delegatePairing(false), .stopAdvertising, .finished(.ended("the agent is stopping"))])
        XCTAssertEqual(advertising.end("again", now: seconds(2)), [], "ended once")
        XCTAssertEqual(EnrolmentOutcome.ended("the agent is stopping").message, "the agent is stopping")

        var connected = session()
        _ = connected.start(now: .zero)
        _ = connected.peripheralConnected(connection(phone), now: seconds(1))
        XCTAssertEqual(connected.end("the controller was reset during the window", now: seconds(2)),
                       [.delegatePairing(false), .disconnect(phone), .finished(.ended("the controller was reset during the window"))])
        XCTAssertNil(connected.nextDeadline)
    }

    func testAConnectedPhoneIsAskedToPairAndALegacyOneRefused() {
        var enrolment = session()
        _ = enrolment.start(now: .zero)
        let connected = enrolment.peripheralConnected(connection(phone), now: seconds(1))
        XCTAssertEqual(connected, [
            .connected(handle: phone, peer: AddressWithType(BluetoothAddress(rawValue: 0xC1_22_33_44_55_66), isRandom: true)),
            // Security Request: bonding and Secure Connections, no MITM (Just Works).
            .sendSecurityManager(handle: phone, pdu: [0x0B, 0x09]),
        ])
        // Another central while the phone is there is sent away; the phone stays.
        XCTAssertEqual(enrolment.peripheralConnected(connection(0x0042), now: seconds(2)), [.disconnect(0x0042)])
        XCTAssertEqual(enrolment.longTermKeyRequested(LELongTermKeyRequest(connectionHandle: phone), now: seconds(2)),
                       [.rejectLongTermKeyRequest(phone)], "no key before a pairing")
        XCTAssertEqual(enrolment.longTermKeyRequested(LELongTermKeyRequest(connectionHandle: 0x0042), now: seconds(2)),
                       [.rejectLongTermKeyRequest(0x0042)])

        // Refused, and let go; the window goes on.
        let refused = enrolment.securityManagerPDU(legacyRequest, handle: phone, now: seconds(3))
        XCTAssertEqual(refused, [
            .sendSecurityManager(handle: phone, pdu: [0x05, 0x03]),
            .turnedAway(.pairingFailed(.refused(.legacyPairing))), .disconnect(phone),
        ])
        XCTAssertTrue(TurnedAway.pairingFailed(.refused(.legacyPairing)).message.contains("too old"))
        XCTAssertFalse(enrolment.isFinished)
        XCTAssertEqual(enrolment.securityManagerPDU(secureRequest, handle: phone, now: seconds(4)),
                       [.sendSecurityManager(handle: phone, pdu: [0x05, 0x09])], "one pairing per link: Repeated Attempts")
        XCTAssertEqual(enrolment.connectionClosed(handle: phone, now: seconds(4)), [.startAdvertising(EnrolmentAdvertisement(name: "door-1"))])
        XCTAssertEqual(enrolment.nextDeadline, seconds(120), "the window keeps its end")
        // At its end, the window says how the last phone failed.
        let ended = enrolment.timerFired(now: seconds(120))
        XCTAssertEqual(ended, [.delegatePairing(false), .stopAdvertising, .finished(.windowEnded(lastFailure: .pairingFailed(.refused(.legacyPairing))))])
        XCTAssertTrue(EnrolmentOutcome.windowEnded(lastFailure: .pairingFailed(.refused(.legacyPairing))).message.contains("too old"))
        XCTAssertEqual(enrolment.timerFired(now: seconds(500)), [])
    }

    func testAClientGoneBeforeTheWindowStartedEndsIt() {
        var enrolment = session()
        XCTAssertEqual(enrolment.end("the enroll command left before the window ended", now: .zero),
                       [.finished(.ended("the enroll command left before the window ended"))], "nothing started, nothing to stop")
        XCTAssertTrue(enrolment.isFinished)
        XCTAssertEqual(enrolment.start(now: .zero), [], "a window whose client is gone never opens")
        XCTAssertNil(enrolment.nextDeadline)
        XCTAssertEqual(enrolment.peripheralConnected(connection(phone), now: seconds(1)), [.disconnect(phone)])
        XCTAssertEqual(enrolment.end("again", now: seconds(2)), [], "ended once")
    }

    func testACentralThatDoesNotStartPairingIsLetGoAndTheWindowGoesOn() {
        var enrolment = session(window: .seconds(60))
        _ = enrolment.start(now: .zero)
        _ = enrolment.peripheralConnected(connection(phone), now: seconds(1))
        XCTAssertEqual(enrolment.nextDeadline, seconds(11), "ten seconds to send a Pairing Request")
        XCTAssertEqual(enrolment.timerFired(now: seconds(10)), [])
        XCTAssertEqual(enrolment.timerFired(now: seconds(11)), [.turnedAway(.noPairingRequest(.seconds(10))), .disconnect(phone)])
        XCTAssertTrue(TurnedAway.noPairingRequest(.seconds(10)).message.contains("did not start pairing within 10 s"))
        XCTAssertEqual(enrolment.nextDeadline, seconds(60))
        XCTAssertEqual(enrolment.timerFired(now: seconds(12)), [], "let go once")
        XCTAssertEqual(enrolment.connectionClosed(handle: phone, now: seconds(12)), [.startAdvertising(EnrolmentAdvertisement(name: "door-1"))])

        // A phone that starts pairing in time keeps its link past that moment.
        _ = enrolment.peripheralConnected(connection(0x0043), now: seconds(20))
        _ = enrolment.securityManagerPDU(secureRequest, handle: 0x0043, now: seconds(22))
        XCTAssertEqual(enrolment.nextDeadline, seconds(52), "only the SMP timer")
        XCTAssertEqual(enrolment.timerFired(now: seconds(30)), [])
        XCTAssertEqual(enrolment.timerFired(now: seconds(52)),
                       [.turnedAway(.pairingFailed(.timedOut)), .disconnect(0x0043)], "a stalled pairing is let go too")
        XCTAssertFalse(enrolment.isFinished)
        XCTAssertEqual(enrolment.timerFired(now: seconds(60)),
                       [.delegatePairing(false), .finished(.windowEnded(lastFailure: .pairingFailed(.timedOut)))], "its link is already going")
    }

    func testADigitsWindowRefusesAPhoneThatCannotCompareThem() {
        var enrolment = session(method: .numericComparison)
        _ = enrolment.start(now: .zero)
        let connected = enrolment.peripheralConnected(connection(phone), now: seconds(1))
        // Security Request with MITM: bonding, MITM and Secure Connections.
        XCTAssertEqual(connected.last, .sendSecurityManager(handle: phone, pdu: [0x0B, 0x0D]))
        // NoInputNoOutput: refused with Authentication Requirements, never Just Works.
        XCTAssertEqual(enrolment.securityManagerPDU(secureRequest, handle: phone, now: seconds(2)), [
            .sendSecurityManager(handle: phone, pdu: [0x05, 0x03]),
            .turnedAway(.pairingFailed(.refused(.cannotCompareDigits(.noInputNoOutput)))), .disconnect(phone),
        ])
        let words = EnrolmentOutcome.windowEnded(lastFailure: .pairingFailed(.refused(.cannotCompareDigits(.noInputNoOutput)))).message
        XCTAssertTrue(words.contains("cannot compare six digits"), words)
        XCTAssertTrue(words.contains("no display and no input"), words)
        XCTAssertTrue(words.contains("--yes"), words)
    }

    func testAPhoneLeavingBeforePairingFreesTheWindow() {
        var enrolment = session(window: .seconds(60))
        _ = enrolment.start(now: .zero)
        _ = enrolment.peripheralConnected(connection(phone), now: seconds(1))
        XCTAssertEqual(enrolment.connectionClosed(handle: 0x0099, now: seconds(2)), [], "not the phone's link")
        XCTAssertEqual(enrolment.connectionClosed(handle: phone, now: seconds(2)), [.startAdvertising(EnrolmentAdvertisement(name: "door-1"))])
        XCTAssertFalse(enrolment.isFinished)
        XCTAssertEqual(enrolment.nextDeadline, seconds(60), "the window keeps its end")
        // The next phone is taken.
        XCTAssertEqual(enrolment.peripheralConnected(connection(0x0043), now: seconds(3)).count, 2)
        XCTAssertEqual(enrolment.timerFired(now: seconds(60)), [.delegatePairing(false), .disconnect(0x0043), .finished(.windowEnded(lastFailure: nil))])
    }

    func testAStartedPairingThatTimesOutOrLosesItsLinkFreesTheWindow() throws {
        var enrolment = session()
        _ = enrolment.start(now: .zero)
        _ = enrolment.peripheralConnected(connection(phone), now: seconds(1))
        let response = enrolment.securityManagerPDU(secureRequest, handle: phone, now: seconds(2))
        guard case .sendSecurityManager(_, let pdu)? = response.first else { return XCTFail("\(response)") }
        XCTAssertEqual(pdu.first, 0x02, "Pairing Response")
        XCTAssertEqual(enrolment.nextDeadline, seconds(32), "the SMP timer, before the window's end")
        XCTAssertEqual(enrolment.timerFired(now: seconds(32)), [.turnedAway(.pairingFailed(.timedOut)), .disconnect(phone)])
        XCTAssertEqual(enrolment.connectionClosed(handle: phone, now: seconds(33)), [.startAdvertising(EnrolmentAdvertisement(name: "door-1"))])

        var leaving = session()
        _ = leaving.start(now: .zero)
        _ = leaving.peripheralConnected(connection(phone), now: seconds(1))
        _ = leaving.securityManagerPDU(secureRequest, handle: phone, now: seconds(2))
        XCTAssertEqual(leaving.connectionClosed(handle: phone, now: seconds(3)),
                       [.turnedAway(.pairingFailed(.linkClosed)), .startAdvertising(EnrolmentAdvertisement(name: "door-1"))])
        XCTAssertEqual(leaving.nextDeadline, seconds(120))
        XCTAssertTrue(TurnedAway.pairingFailed(.linkClosed).message.contains("no IRK"))
    }

    func testAdvertisingDataHoldsNameAppearanceAndHeartRate() {
        let short = EnrolmentAdvertisement(name: "door-1")
        XCTAssertEqual(short.advertisingData, [0x02, 0x01, 0x06, 0x03, 0x19, 0x40, 0x03, 0x03, 0x03, 0x0D, 0x18,
                                               0x07, 0x09] + Array("door-1".utf8))
        XCTAssertEqual(short.scanResponseData, [])
        // Too long for the advertising data: shortened there, whole in the scan response,
        // never cut inside a character.
        let name = "entrance-north-building-ä"
        let long = EnrolmentAdvertisement(name: name)
        XCTAssertLessThanOrEqual(long.advertisingData.count, 31)
        XCTAssertEqual(long.advertisingData[11 ... 12], [19, 0x08])
        XCTAssertEqual(String(decoding: long.advertisingData[13...], as: UTF8.self), "entrance-north-bui")
        XCTAssertEqual(long.scanResponseData, [UInt8(name.utf8.count + 1), 0x09] + Array(name.utf8))
        let odd = EnrolmentAdvertisement.prefix(of: "abcdefghijklmnopqä", fitting: 18)
        XCTAssertEqual(String(decoding: odd, as: UTF8.self), "abcdefghijklmnopq")
        // Both families put ADV_IND on air.
        let legacy = short.startCommands(family: .legacy)
        XCTAssertEqual(legacy.map(\.1), [.leSetAdvertisingParameters, .leSetAdvertisingData, .leSetScanResponseData, .leSetAdvertisingEnable])
        XCTAssertEqual(try LESetAdvertisingParametersCommand(packet: legacy[0].0).type, .connectableUndirected)
        let extended = short.startCommands(family: .extended)
        XCTAssertEqual(try LESetExtendedAdvertisingParametersCommand(packet: extended[0].0).properties, [.legacy, .connectable, .scannable])
    }
}
