import Glibc
import HCI
import XCTest
@testable import HCITransport

/// `run --capture`: the file is the owner's only, never written through a symbolic link,
/// and holds no pairing key or LTK unless `--capture-keys` (docs/security.md, "Secrets").
final class CaptureRedactionTests: XCTestCase {
    private let key = Array(0xA0 ... 0xAF) as [UInt8]
    /// LE Long Term Key Request Reply on handle 0x0040.
    private var ltkReply: HCIPacket { HCIPacket(type: .command, payload: [0x1A, 0x20, 18, 0x40, 0x00] + key) }
    /// LE Enable Encryption on 0x0040 with a random and an EDIV.
    private var enableEncryption: HCIPacket {
        HCIPacket(type: .command, payload: [0x19, 0x20, 28, 0x40, 0x00] + Array(1 ... 8) + [0x34, 0x12] + key)
    }
    /// SMP on 0x0040: a first fragment, L2CAP length, channel 0x0006, the code, its octets.
    private func smp(_ code: UInt8, _ octets: [UInt8], flags: UInt8 = 0x20) -> HCIPacket {
        let l2cap = [UInt8(1 + octets.count), 0x00, 0x06, 0x00, code] + octets
        return HCIPacket(type: .acl, payload: [0x40, flags, UInt8(l2cap.count), 0x00] + l2cap)
    }

    func testKeysAreZeroedAndEverythingElseKept() {
        XCTAssertEqual(CaptureRedaction.redacted(ltkReply).payload, [0x1A, 0x20, 18, 0x40, 0x00] + Array(repeating: 0, count: 16))
        XCTAssertEqual(CaptureRedaction.redacted(enableEncryption).payload,
                       [0x19, 0x20, 28, 0x40, 0x00] + Array(1 ... 8) + [0x34, 0x12] + Array(repeating: 0, count: 16))
        // Encryption Information (LTK), Central Identification, Identity Information (IRK), Signing Information (CSRK).
        for (code, octets) in [(UInt8(0x06), key), (0x07, [0x34, 0x12] + Array(1 ... 8)), (0x08, key), (0x0A, key)] {
            let redacted = CaptureRedaction.redacted(smp(code, octets))
            XCTAssertEqual(redacted, smp(code, Array(repeating: 0, count: octets.count)), "code \(code)")
        }
        // The identity address, public keys, confirms and randoms are no secret; nor is a
        // continuation fragment, or another channel.
        let kept = [smp(0x09, [0x01, 1, 2, 3, 4, 5, 6]), smp(0x0C, Array(repeating: 7, count: 64)), smp(0x04, key),
                    smp(0x08, key, flags: 0x10), HCIPacket(type: .acl, payload: [0x40, 0x20, 9, 0, 5, 0, 0x04, 0x00, 0x0A, 1, 2, 3, 4]),
                    HCIPacket(type: .command, payload: [0x03, 0x0C, 0]), HCIPacket(type: .event, payload: [0x3E, 13, 0x05] + Array(1 ... 12))]
        for packet in kept {
            XCTAssertEqual(CaptureRedaction.redacted(packet), packet)
        }
        // Truncated ones stay as they are, without a crash.
        XCTAssertEqual(CaptureRedaction.redacted(HCIPacket(type: .command, payload: [0x1A, 0x20])).payload, [0x1A, 0x20])
        XCTAssertEqual(CaptureRedaction.redacted(HCIPacket(type: .command, payload: [0x1A, 0x20, 18, 0x40])).payload, [0x1A, 0x20, 18, 0x40])
    }

    private func capture(_ path: String, keepsKeys: Bool) throws -> [HCIPacket] {
        let inner = ScriptedTransport()
        let transport = CapturingTransport(wrapping: inner, path: path, keepsKeys: keepsKeys) { 1_763_776_800_000_000 }
        try transport.open()
        try transport.send(ltkReply)
        inner.incoming = [smp(0x08, key)]
        XCTAssertEqual(try transport.receive(), [smp(0x08, key)], "the host gets the key itself")
        transport.close()
        XCTAssertEqual(inner.sent, [ltkReply], "the controller gets the key itself")
        var parser = BTSnoopParser()
        parser.append(try readFile(path))
        var packets: [HCIPacket] = []
        while let record = try parser.nextRecord() { packets.append(record.packet) }
        return packets
    }

    func testTheCaptureIsTheOwnersOnlyHoldsNoKeyByDefaultAndRefusesASymlink() throws {
        let path = temporaryPath(self, "capture.btsnoop")
        // An existing file readable by all keeps no such mode, whatever the umask.
        try writeFile(path, [1, 2, 3])
        XCTAssertEqual(chmod(path, 0o644), 0)
        let previous = umask(0)
        defer { umask(previous) }
        let redacted = try capture(path, keepsKeys: false)
        var info = stat()
        XCTAssertEqual(stat(path, &info), 0)
        XCTAssertEqual(info.st_mode & 0o777, 0o600)
        XCTAssertEqual(redacted, [CaptureRedaction.redacted(ltkReply), CaptureRedaction.redacted(smp(0x08, key))])
        XCTAssertFalse(try readFile(path).windowsContain(key), "no key octets anywhere in the file")

        let kept = try capture(temporaryPath(self, "keys.btsnoop"), keepsKeys: true)
        XCTAssertEqual(kept, [ltkReply, smp(0x08, key)], "--capture-keys keeps them")

        let link = temporaryPath(self, "link.btsnoop")
        let target = temporaryPath(self, "target")
        try writeFile(target, [9])
        XCTAssertEqual(symlink(target, link), 0)
        XCTAssertThrowsError(try CapturingTransport(wrapping: ScriptedTransport(), path: link).open())
        XCTAssertEqual(try readFile(target), [9], "the link's target untouched")
    }
}

private extension Array where Element == UInt8 {
    func windowsContain(_ needle: [UInt8]) -> Bool {
        guard count >= needle.count else { return false }
        return (0 ... count - needle.count).contains { Array(self[$0 ..< $0 + needle.count]) == needle }
    }
}
