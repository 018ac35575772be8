import Glibc
import HCI
import XCTest
@testable import HCITransport

final class SerialTransportTests: XCTestCase {
    /// A pseudo-terminal pair: the transport opens the subsidiary side like a UART, the test
    /// plays the dongle on the main side.
    /// From asm-generic/ioctls.h (same on x86_64 and arm64): `_IOR('T', 0x30, unsigned int)`
    /// and `_IOW('T', 0x31, int)`. Glibc's posix_openpt/grantpt/unlockpt/ptsname sit behind
    /// _XOPEN_SOURCE, which Swift's Glibc module does not define, so do what they do.
    private static let getPtyNumber: UInt = 0x8004_5430
    private static let setPtyLock: UInt = 0x4004_5431

    /// A pseudo-terminal pair: the transport opens the subsidiary side like a UART, the test
    /// plays the dongle on the main side.
    private func openPseudoTerminal() throws -> (main: Int32, path: String) {
        let main = open("/dev/ptmx", O_RDWR | O_NOCTTY)
        guard main >= 0 else { throw XCTSkip("no pseudo-terminals here: \(String(cString: strerror(errno)))") }
        addTeardownBlock { close(main) }
        var unlock: Int32 = 0
        var number: UInt32 = 0
        guard ioctl(main, Self.setPtyLock, &unlock) == 0, ioctl(main, Self.getPtyNumber, &number) == 0 else {
            throw POSIXFailure(call: "ioctl(TIOCSPTLCK/TIOCGPTN)", errno: errno)
        }
        // The main side must not echo or translate what the transport writes.
        var settings = termios()
        tcgetattr(main, &settings)
        cfmakeraw(&settings)
        tcsetattr(main, TCSANOW, &settings)
        return (main, "/dev/pts/\(number)")
    }

    /// Opens with RTS/CTS; a pty driver may drop CRTSCTS from its termios (it has no modem
    /// lines), which the transport reports as `.serialFlowControlUnsupported` — only then
    /// does this test fall back to no flow control, so the data path is still tested.
    private func openTransport(path: String, baud: Int = 1_000_000) throws -> SerialTransport {
        let transport = try SerialTransport(path: path, baud: baud)
        addTeardownBlock { transport.close() }
        do {
            try transport.open()
        } catch .serialFlowControlUnsupported(let refused) {
            print("note: the kernel refuses CRTSCTS on the pty \(refused); testing without flow control")
            transport.flowControl = false
            try transport.open()
        }
        return transport
    }

    func testBytesFlowBothWays() throws {
        let (main, path) = try openPseudoTerminal()
        let transport = try openTransport(path: path)
        XCTAssertEqual(transport.name, "serial:\(path)", "the default speed is left out, as users write it")

        let expected = [Packets.resetComplete, Packets.advertisingReport(address: 9, rssi: -42)]
        let bytes = expected.flatMap(\.h4Bytes)
        try writeAll(main, Array(bytes.prefix(5)))
        try writeAll(main, Array(bytes.dropFirst(5)))
        XCTAssertEqual(try receivePackets(transport, count: 2), expected)

        try transport.send(Packets.reset)
        try transport.send(Packets.setScanEnable(true))
        let written = Packets.reset.h4Bytes + Packets.setScanEnable(true).h4Bytes
        XCTAssertEqual(try readExactly(main, written.count), written)
    }

    func testTermiosIsRaw8N1AtTheRequestedSpeed() throws {
        let (_, path) = try openPseudoTerminal()
        let transport = try openTransport(path: path, baud: 115_200)
        let fd = try XCTUnwrap(transport.fileDescriptor)
        var settings = termios()
        XCTAssertEqual(tcgetattr(fd, &settings), 0)
        XCTAssertEqual(cfgetospeed(&settings), speed_t(B115200))
        XCTAssertEqual(settings.c_cflag & tcflag_t(CSIZE), tcflag_t(CS8))
        XCTAssertEqual(settings.c_cflag & tcflag_t(PARENB | CSTOPB), 0)
        XCTAssertEqual(settings.c_lflag & tcflag_t(ICANON | ECHO | ISIG), 0)
        XCTAssertEqual(settings.c_oflag & tcflag_t(OPOST), 0)
    }

    func testMissingDeviceSaysSo() throws {
        let transport = try SerialTransport(path: "/dev/does-not-exist-ttyACM9")
        XCTAssertThrowsError(try transport.open()) { error in
            XCTAssertEqual(error as? TransportError, .serialDevice(path: "/dev/does-not-exist-ttyACM9", call: "open", errno: ENOENT))
            XCTAssertTrue("\(error)".contains("plugged in"))
        }
    }

    func testANonTerminalIsRefused() throws {
        let transport = try SerialTransport(path: "/dev/null")
        XCTAssertThrowsError(try transport.open()) { error in
            XCTAssertEqual(error as? TransportError, .serialDevice(path: "/dev/null", call: "tcgetattr", errno: ENOTTY))
        }
        XCTAssertFalse(transport.isOpen)
    }

    func testEveryListedBaudRateHasASpeed() {
        for baud in SerialBaudRate.supported {
            XCTAssertNotNil(SerialBaudRate.speed(for: baud), "\(baud)")
        }
        XCTAssertEqual(SerialBaudRate.speed(for: 1_000_000), speed_t(B1000000))
        XCTAssertNil(SerialBaudRate.speed(for: 0))
        XCTAssertNil(SerialBaudRate.speed(for: -1))
    }
}
