import Glibc
import HCI
import XCTest
@testable import HCITransport

final class CapturingTransportTests: XCTestCase {
    private let exchange: [(BTSnoop.Direction, HCIPacket)] = [
        (.hostToController, Packets.reset),
        (.controllerToHost, Packets.resetComplete),
        (.hostToController, Packets.setScanEnable(true)),
        (.controllerToHost, Packets.setScanEnableComplete),
        (.controllerToHost, Packets.advertisingReport(address: 1, rssi: -55)),
        (.controllerToHost, Packets.advertisingReport(address: 2, rssi: -66, data: [0x03, 0x03, 0xAA, 0xFE])),
        (.hostToController, Packets.acl),
        (.controllerToHost, Packets.disconnectionComplete),
    ]

    /// Runs the exchange through a capturing wrapper; returns the capture's path.
    private func recordExchange() throws -> String {
        let path = temporaryPath(self, "capture.btsnoop")
        let inner = ScriptedTransport()
        var clock: Int64 = 1_763_776_800_000_000
        let transport = CapturingTransport(wrapping: inner, path: path) {
            clock += 1250
            return clock
        }
        try transport.open()
        for (direction, packet) in exchange {
            switch direction {
            case .hostToController:
                try transport.send(packet)
            case .controllerToHost:
                inner.incoming = [packet]
                XCTAssertEqual(try transport.receive(), [packet])
            }
        }
        XCTAssertEqual(inner.sent, exchange.filter { $0.0 == .hostToController }.map(\.1))
        XCTAssertEqual(transport.capturedRecordCount, exchange.count)
        transport.close()
        XCTAssertNil(transport.captureError)
        return path
    }

    func testCaptureReadsBackWithTheSamePacketsAndDirections() throws {
        let path = try recordExchange()
        var parser = BTSnoopParser()
        parser.append(try readFile(path))
        var records: [BTSnoop.Record] = []
        while let record = try parser.nextRecord() { records.append(record) }
        XCTAssertEqual(parser.datalink, .h4)
        XCTAssertEqual(records.map(\.direction), exchange.map(\.0))
        XCTAssertEqual(records.map(\.packet), exchange.map(\.1))
        XCTAssertEqual(records.map(\.timestampMicroseconds), (1 ... exchange.count).map { 1_763_776_800_000_000 + Int64($0) * 1250 })
    }

    func testTsharkCountsEveryPacket() throws {
        guard let tshark = (["/usr/bin/tshark", "/usr/local/bin/tshark"] as [String]).first(where: { access($0, X_OK) == 0 }) else {
            print("skipping: tshark is not installed")
            throw XCTSkip("tshark is not installed")
        }
        let path = try recordExchange()
        let output = try run("\(tshark) -r '\(path)' -T fields -e frame.number -e hci_h4.direction 2>/dev/null")
        let lines = output.split(separator: "\n")
        XCTAssertEqual(lines.count, exchange.count, output)
        XCTAssertEqual(lines.map { $0.split(separator: "\t").first.map(String.init) }, (1 ... exchange.count).map { "\($0)" })
    }

    func testBufferedRecordsReachTheFileOnFlush() throws {
        let path = temporaryPath(self, "flush.btsnoop")
        let writer = try BTSnoopWriter(path: path)
        XCTAssertEqual(try readFile(path), BTSnoop.fileHeader(datalink: .h4))
        let record = BTSnoop.Record(direction: .controllerToHost, packet: Packets.resetComplete, timestampMicroseconds: 5)
        try writer.write(record)
        try writer.flush()
        XCTAssertEqual(try readFile(path), BTSnoop.fileHeader(datalink: .h4) + BTSnoop.encodeRecord(record))
        try writer.close()
    }

    func testUnwritableCaptureFailsAtOpen() {
        let transport = CapturingTransport(wrapping: ScriptedTransport(), path: "/nonexistent-directory/c.btsnoop")
        XCTAssertThrowsError(try transport.open()) { error in
            XCTAssertEqual(error as? TransportError, .captureFile(path: "/nonexistent-directory/c.btsnoop", errno: ENOENT))
        }
        XCTAssertFalse(transport.isOpen)
    }

    /// A capture that fills the disk stops; the transport goes on.
    func testFailingCaptureDoesNotStopTheTransport() throws {
        guard access("/dev/full", W_OK) == 0 else { throw XCTSkip("no /dev/full") }
        let inner = ScriptedTransport()
        let transport = CapturingTransport(wrapping: inner, path: "/dev/full")
        XCTAssertThrowsError(try transport.open()) // the header write already fails
        let later = CapturingTransport(wrapping: inner, path: temporaryPath(self, "ok"))
        try later.open()
        try later.send(Packets.reset)
        XCTAssertEqual(inner.sent, [Packets.reset])
    }

    private func run(_ command: String) throws -> String {
        guard let pipe = popen(command, "r") else { throw POSIXFailure(call: "popen", errno: errno) }
        var output = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = fread(&buffer, 1, buffer.count, pipe)
            if count == 0 { break }
            output += buffer[0 ..< count]
        }
        let status = pclose(pipe)
        XCTAssertEqual(status, 0, "\(command) exited with \(status)")
        return String(decoding: output, as: UTF8.self)
    }
}
