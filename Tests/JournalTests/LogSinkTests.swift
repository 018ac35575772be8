#if canImport(Glibc)
import Glibc
#endif
import JournalFixtures
import XCTest
@testable import Journal

final class LogSinkTests: XCTestCase {
    func testLogLevelNamesAndFiltering() {
        XCTAssertEqual(Severity(name: "debug"), .debug)
        XCTAssertEqual(Severity(name: "WARNING"), .warning)
        XCTAssertEqual(Severity(name: "err"), .error)
        XCTAssertNil(Severity(name: "verbose"))
        for level in Severity.allCases { XCTAssertEqual(Severity(name: level.name), level) }

        let sink = LogSink(minimumLevel: .notice, destination: .journalStream)
        let out = captureStandardError {
            sink.log(.debug, "a debug line")
            sink.log(.info, "an info line")
            sink.log(.notice, "a notice line")
            sink.log(.error, "an error line")
        }
        XCTAssertEqual(out, "<5>a notice line\n<3>an error line\n")
    }

    func testPrefixesWhenJournalStreamNamesStandardError() {
        let out = captureStandardError {
            var status = stat()
            XCTAssertEqual(fstat(2, &status), 0)
            withEnvironment("JOURNAL_STREAM", "\(status.st_dev):\(status.st_ino)") {
                XCTAssertTrue(LogSink.stderrIsJournal())
                LogSink().log(.warning, "controller down", ["reason": "hardware error", "attempt": "2"])
            }
        }
        XCTAssertEqual(out, "<4>controller down reason=\"hardware error\" attempt=2\n")
    }

    func testNoPrefixesWhenJournalStreamIsAnotherStream() {
        let out = captureStandardError {
            withEnvironment("JOURNAL_STREAM", "1:2") {
                XCTAssertFalse(LogSink.stderrIsJournal())
                LogSink().log(.info, "start")
            }
        }
        XCTAssertFalse(out.hasPrefix("<"), out)
        XCTAssertTrue(out.hasSuffix(" info start\n"), out)
        XCTAssertTrue(out.first?.isNumber ?? false, "starts with a timestamp: \(out)")
    }

    func testNativeJournalProtocolCarriesFields() throws {
        let journald = try DatagramReceiver()
        let sink = LogSink(minimumLevel: .info, destination: .journalSocket(try UnixDatagramSender(address: journald.address)))
        let out = captureStandardError {
            sink.log(.info, "checkin", ["person_id": "u_1001", "event": "checkin", "tag": "tag-1001", "rssi": "-61", "note": "two\nlines", "message": "spoof"])
        }
        XCTAssertEqual(out, "", "nothing on stderr when journald takes it")
        let datagram = try XCTUnwrap(journald.receive())
        let fields = try XCTUnwrap(parseJournalDatagram(datagram))
        let names = fields.map(\.0)
        XCTAssertEqual(names, ["MESSAGE", "PRIORITY", "SYSLOG_IDENTIFIER", "PERSON_ID", "EVENT", "TAG", "RSSI", "NOTE", "FIELD_MESSAGE"])
        let values = Dictionary(fields, uniquingKeysWith: { first, _ in first })
        XCTAssertEqual(values["MESSAGE"], "checkin person_id=u_1001 event=checkin tag=tag-1001 rssi=-61 note=\"two\\nlines\" message=spoof")
        XCTAssertEqual(values["PRIORITY"], "6")
        XCTAssertEqual(values["SYSLOG_IDENTIFIER"], "beacon-gateway")
        XCTAssertEqual(values["PERSON_ID"], "u_1001")
        XCTAssertEqual(values["NOTE"], "two\nlines", "binary-safe form keeps the newline")
        XCTAssertNil(journald.receive(), "one datagram per line")
    }

    func testNativeJournalFallsBackToStandardError() throws {
        let sender = try UnixDatagramSender(address: "/tmp/bg-no-journald-\(getpid())")
        let sink = LogSink(destination: .journalSocket(sender))
        let out = captureStandardError { sink.log(.error, "delivery failed", ["status": "503"]) }
        XCTAssertEqual(out, "<3>delivery failed status=503\n")
    }

    func testAutomaticPicksTheTerminalOutsideSystemd() {
        withEnvironment("JOURNAL_STREAM", nil) {
            guard case .terminal = LogSink.automatic().destination else { return XCTFail("terminal expected") }
        }
    }

    func testAutomaticPicksTheNativeProtocolUnderSystemd() throws {
        let journald = try DatagramReceiver()
        let out = captureStandardError {
            var status = stat()
            fstat(2, &status)
            withEnvironment("JOURNAL_STREAM", "\(status.st_dev):\(status.st_ino)") {
                let sink = LogSink.automatic(journalSocketPath: journald.address)
                guard case .journalSocket = sink.destination else { return XCTFail("native protocol expected") }
                sink.log(.info, "start")
                let missing = LogSink.automatic(journalSocketPath: "/tmp/bg-absent-\(getpid())")
                guard case .journalStream = missing.destination else { return XCTFail("prefixed stderr expected") }
            }
        }
        XCTAssertEqual(out, "")
        XCTAssertNotNil(journald.receive())
    }

    func testJournalFieldNames() {
        XCTAssertEqual(JournalEntry.fieldName(forKey: "person_id"), "PERSON_ID")
        XCTAssertEqual(JournalEntry.fieldName(forKey: "le-features"), "LE_FEATURES")
        XCTAssertEqual(JournalEntry.fieldName(forKey: "_pid"), "PID", "no trusted-field lookalikes")
        XCTAssertEqual(JournalEntry.fieldName(forKey: "3d"), "F_3D")
        XCTAssertNil(JournalEntry.fieldName(forKey: "__"))
        XCTAssertEqual(JournalEntry.fieldName(forKey: String(repeating: "a", count: 100))?.count, 64)
    }

    func testBinarySafeEncodingBytes() {
        var entry = JournalEntry()
        entry.append(name: "A", value: "x")
        entry.append(name: "B", value: "1\n2")
        XCTAssertEqual(entry.encoded, Array("A=x\nB\n".utf8) + [3, 0, 0, 0, 0, 0, 0, 0] + Array("1\n2\n".utf8))
    }
}
