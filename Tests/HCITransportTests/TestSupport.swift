import Glibc
import HCI
import XCTest
@testable import HCITransport

/// A fresh path in the temporary directory, removed at the end of the test.
func temporaryPath(_ test: XCTestCase, _ name: String) -> String {
    let directory = String(cString: getenv("TMPDIR") ?? strdup("/tmp"))
    let path = "\(directory)/hcitransport-\(getpid())-\(UInt32.random(in: 0 ... .max))-\(name)"
    test.addTeardownBlock { unlink(path) }
    return path
}

func writeFile(_ path: String, _ bytes: [UInt8]) throws {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    guard fd >= 0 else { throw POSIXFailure(call: "open", errno: errno) }
    defer { close(fd) }
    var offset = 0
    while offset < bytes.count {
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress.map { $0 + offset }, $0.count - offset) }
        guard written > 0 else { throw POSIXFailure(call: "write", errno: errno) }
        offset += written
    }
}

func readFile(_ path: String) throws -> [UInt8] {
    let fd = open(path, O_RDONLY)
    guard fd >= 0 else { throw POSIXFailure(call: "open", errno: errno) }
    defer { close(fd) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
        let count = read(fd, &chunk, chunk.count)
        guard count >= 0 else { throw POSIXFailure(call: "read", errno: errno) }
        if count == 0 { return bytes }
        bytes += chunk[0 ..< count]
    }
}

struct POSIXFailure: Error, CustomStringConvertible {
    var call: String
    var errno: Int32
    var description: String { "\(call): \(String(cString: strerror(errno)))" }
}

/// Waits (without sleeping: in poll) until the descriptor is readable; false on timeout.
func waitReadable(_ fd: Int32, milliseconds: Int32 = 5000) -> Bool {
    var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
    while true {
        let ready = poll(&descriptor, 1, milliseconds)
        if ready < 0 && errno == EINTR { continue }
        return ready > 0
    }
}

/// Receives until `count` packets arrived (or the transport stops becoming readable).
func receivePackets(_ transport: any HCITransport, count: Int) throws -> [HCIPacket] {
    var packets: [HCIPacket] = []
    while packets.count < count {
        guard let fd = transport.fileDescriptor, waitReadable(fd) else { break }
        packets += try transport.receive()
    }
    return packets
}

/// Writes all of `bytes` to a blocking descriptor.
func writeAll(_ fd: Int32, _ bytes: [UInt8]) throws {
    var offset = 0
    while offset < bytes.count {
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress.map { $0 + offset }, $0.count - offset) }
        if written < 0 && errno == EINTR { continue }
        guard written > 0 else { throw POSIXFailure(call: "write", errno: errno) }
        offset += written
    }
}

/// Reads exactly `count` bytes from a descriptor, waiting in poll.
func readExactly(_ fd: Int32, _ count: Int) throws -> [UInt8] {
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 4096)
    while bytes.count < count {
        guard waitReadable(fd) else { throw POSIXFailure(call: "poll (timed out)", errno: ETIMEDOUT) }
        let got = read(fd, &chunk, min(chunk.count, count - bytes.count))
        if got < 0 && (errno == EINTR || errno == EAGAIN) { continue }
        guard got > 0 else { throw POSIXFailure(call: "read", errno: errno) }
        bytes += chunk[0 ..< got]
    }
    return bytes
}

enum Packets {
    static let reset = HCIPacket(type: .command, payload: [0x03, 0x0C, 0x00])
    static let resetComplete = HCIPacket(type: .event, payload: [0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00])
    static let setScanEnableComplete = HCIPacket(type: .event, payload: [0x0E, 0x04, 0x01, 0x0C, 0x20, 0x00])
    static let readBDAddr = HCIPacket(type: .command, payload: [0x09, 0x10, 0x00])
    static func setScanEnable(_ enable: Bool) -> HCIPacket {
        HCIPacket(type: .command, payload: [0x0C, 0x20, 0x02, enable ? 0x01 : 0x00, 0x00])
    }
    static func setExtendedScanEnable(_ enable: Bool) -> HCIPacket {
        HCIPacket(type: .command, payload: [0x42, 0x20, 0x06, enable ? 0x01 : 0x00, 0x00, 0, 0, 0, 0])
    }
    static let commandStatus = HCIPacket(type: .event, payload: [0x0F, 0x04, 0x00, 0x01, 0x0D, 0x20])
    static let disconnectionComplete = HCIPacket(type: .event, payload: [0x05, 0x04, 0x00, 0x40, 0x00, 0x13])
    static let acl = HCIPacket(type: .acl, payload: [0x40, 0x20, 0x05, 0x00, 0x01, 0x00, 0x04, 0x00, 0x0B])

    /// An LE Advertising Report (LE Meta 0x3E, subevent 0x02) with one report, built byte by byte.
    static func advertisingReport(address last: UInt8, rssi: Int8, data: [UInt8] = [0x02, 0x01, 0x06]) -> HCIPacket {
        var parameters: [UInt8] = [0x02, 0x01] // subevent, Num_Reports
        parameters += [0x00, 0x01] // ADV_IND, random address
        parameters += [last, 0x44, 0x33, 0x22, 0x11, 0xC0] // address, little-endian
        parameters.append(UInt8(data.count))
        parameters += data
        parameters.append(UInt8(bitPattern: rssi))
        return HCIPacket(type: .event, payload: [0x3E, UInt8(parameters.count)] + parameters)
    }
}

func capture(_ records: [(BTSnoop.Direction, HCIPacket)]) -> [UInt8] {
    var bytes = BTSnoop.fileHeader(datalink: .h4)
    for (index, (direction, packet)) in records.enumerated() {
        bytes += BTSnoop.encodeRecord(BTSnoop.Record(
            direction: direction, packet: packet, timestampMicroseconds: 1_700_000_000_000_000 + Int64(index) * 1000))
    }
    return bytes
}

/// A transport whose input the test scripts, for wrappers and the driver.
final class ScriptedTransport: HCITransport {
    var incoming: [HCIPacket] = []
    var sent: [HCIPacket] = []
    var isOpen = false
    var name: String { "scripted" }
    func open() throws(TransportError) { isOpen = true }
    func close() { isOpen = false }
    var fileDescriptor: Int32? { nil }
    var hasPendingInput: Bool { !incoming.isEmpty }
    func receive() throws(TransportError) -> [HCIPacket] {
        guard isOpen else { throw .notOpen }
        defer { incoming.removeAll() }
        return incoming
    }
    func send(_ packet: HCIPacket) throws(TransportError) {
        guard isOpen else { throw .notOpen }
        sent.append(packet)
    }
    var hasPendingOutput: Bool { false }
    func flush() throws(TransportError) {}
    var framingErrors: Int { 0 }
    var isExhausted: Bool { false }
}
