@testable import Fleet
import XCTest

final class EnrolmentChannelTests: XCTestCase {
    private func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    func testARequestGoesAndComesBackWhole() throws {
        let request = EnrolmentChannel.Request(personId: "u_1009", tagId: "phone-u_1009", seconds: 120, comparesDigits: true)
        let line = EnrolmentChannel.line(request)
        XCTAssertTrue(EnrolmentChannel.isRequest(head: line))
        XCTAssertEqual(EnrolmentChannel.request(head: line), request)
        let justWorks = EnrolmentChannel.Request(personId: "a", tagId: "b", seconds: 1, comparesDigits: false)
        XCTAssertEqual(EnrolmentChannel.request(head: EnrolmentChannel.line(justWorks)), justWorks)
    }

    func testTheLongestRequestFitsTheStatusSocketsLimit() {
        let id = String(repeating: "x", count: 64)
        let line = EnrolmentChannel.line(.init(personId: id, tagId: id, seconds: 3600, comparesDigits: true))
        XCTAssertLessThanOrEqual(line.count, StatusRequest.limits.maxRequestBytes)
    }

    func testMalformedRequestsAreRefused() {
        for text in ["enroll u_1 t 120 compare extra\n", "enroll u_1 t 0 compare\n", "enroll u_1 t 3601 compare\n",
                     "enroll u_1 t 12x compare\n", "enroll u_1  120 compare\n", "enroll u_1 t 120 maybe\n", "status json\n"] {
            XCTAssertNil(EnrolmentChannel.request(head: bytes(text)), text)
        }
        XCTAssertFalse(EnrolmentChannel.isRequest(head: bytes("status json\n")))
        XCTAssertFalse(EnrolmentChannel.isRequest(head: bytes("enrollment\n")))
    }

    func testMessagesGoAndComeBackWhole() {
        let messages: [EnrolmentChannel.Message] = [
            .progress("open for 120 s: pair with \"door-1\""), .compare(42), .compare(999_999), .failed("the pairing timed out"),
            .enrolled(.init(pairing: "just-works", identityAddress: "C4:55:66:77:88:99", identityAddressIsRandom: true,
                            irk: "f0e1d2c3b4a5968778695a4b3c2d1e0f")),
            .enrolled(.init(pairing: "numeric-comparison", identityAddress: "00:11:22:33:44:55", identityAddressIsRandom: false, irk: nil)),
        ]
        for message in messages {
            XCTAssertEqual(EnrolmentChannel.message(EnrolmentChannel.line(message)), message)
        }
    }

    func testTextStaysOnOneLineAndUnknownLinesAreNone() {
        let line = EnrolmentChannel.line(.failed("one\ntwo\r\nthree"))
        XCTAssertEqual(line.filter { $0 == UInt8(ascii: "\n") }.count, 1)
        XCTAssertEqual(EnrolmentChannel.message(line), .failed("one two  three"))
        for text in ["hello\n", "compare 1000000\n", "compare x\n", "enrolled just-works A maybe -\n", "enrolled a b\n", "progress\n"] {
            XCTAssertNil(EnrolmentChannel.message(bytes(text)), text)
        }
    }

    func testAnswers() {
        XCTAssertEqual(EnrolmentChannel.answer(EnrolmentChannel.answerLine(matches: true)), true)
        XCTAssertEqual(EnrolmentChannel.answer(EnrolmentChannel.answerLine(matches: false)), false)
        XCTAssertEqual(EnrolmentChannel.answer(bytes("yes\r\n")), true)
        XCTAssertNil(EnrolmentChannel.answer(bytes("y\n")))
    }
}
