import Glibc
import XCTest
@testable import HCITransport

final class UserChannelTests: XCTestCase {
    func testEveryErrnoNamesItsCause() {
        let index = 2
        func map(_ errno: Int32, _ step: TransportError.UserChannelStep = .bind) -> TransportError {
            .userChannel(index: index, step: step, errno: errno)
        }
        XCTAssertEqual(map(EAFNOSUPPORT, .socket), .bluetoothUnsupported)
        XCTAssertTrue(map(EAFNOSUPPORT, .socket).message.contains("this kernel has no Bluetooth support (AF_BLUETOOTH)"))

        XCTAssertEqual(map(ENODEV, .bringDown), .noSuchAdapter(index: 2))
        XCTAssertEqual(map(ENODEV), .noSuchAdapter(index: 2))
        XCTAssertTrue(map(ENODEV).message.contains("no adapter hci2"))
        XCTAssertTrue(map(ENODEV).message.contains("ls /sys/class/bluetooth"))

        XCTAssertEqual(map(EBUSY), .adapterManagedByKernel(index: 2))
        XCTAssertTrue(map(EBUSY).message.contains("hci2 is up and managed by bluetoothd"))
        XCTAssertTrue(map(EBUSY).message.contains("stop it"))

        XCTAssertEqual(map(EUSERS), .userChannelTaken(index: 2))
        XCTAssertEqual(map(EBUSY, .bringDown), .userChannelTaken(index: 2))
        XCTAssertTrue(map(EUSERS).message.contains("another program holds the user channel of hci2"))

        for errno in [EPERM, EACCES] {
            for step in [TransportError.UserChannelStep.socket, .bringDown, .bind] {
                XCTAssertEqual(map(errno, step), .permissionDenied(index: 2))
            }
        }
        XCTAssertTrue(map(EPERM).message.contains("needs CAP_NET_ADMIN"))
        XCTAssertTrue(map(EPERM).message.contains("run as root or give the binary/service the capability"))

        XCTAssertEqual(map(ERFKILL), .rfkillBlocked(index: 2))
        XCTAssertTrue(map(ERFKILL).message.contains("blocked by rfkill"))
        XCTAssertTrue(map(ERFKILL).message.contains("rfkill unblock bluetooth"))

        XCTAssertEqual(map(EIO), .adapterSystemCall(index: 2, call: "bind", errno: EIO))
        XCTAssertTrue(map(EIO).message.contains("hci2: bind failed"))
        XCTAssertTrue(map(EINVAL, .bringDown).message.contains("ioctl(HCIDEVDOWN)"))
    }

    /// This machine's kernel has no AF_BLUETOOTH; on one that has, the point is moot.
    func testOpeningAnAdapterWithoutKernelBluetoothSaysSo() throws {
        let probe = socket(AF_BLUETOOTH, Int32(SOCK_RAW.rawValue), 1)
        if probe >= 0 {
            close(probe)
            throw XCTSkip("this kernel has AF_BLUETOOTH")
        }
        let transport = UserChannelTransport(index: 0)
        XCTAssertThrowsError(try transport.open()) { error in
            XCTAssertEqual(error as? TransportError, .bluetoothUnsupported)
            XCTAssertTrue("\(error)".contains("AF_BLUETOOTH"))
        }
        XCTAssertFalse(transport.isOpen)
        XCTAssertNil(transport.fileDescriptor)
        XCTAssertThrowsError(try transport.receive()) { XCTAssertEqual($0 as? TransportError, .notOpen) }
    }
}

/// A bind refused with EBUSY right after HCIDEVDOWN is retried by the caller's loop, not
/// by sleeping inside `open()`; the transport bounds how often in a row.
final class UserChannelBusyBindTests: XCTestCase {
    /// Opens that fail with EBUSY `busy` times, then hand out a socket.
    private final class Kernel {
        var busy: Int
        var attempts = 0
        /// The far ends of the sockets handed out: the transport owns (and closes) the near
        /// ends, the test these.
        var peers: [Int32] = []
        init(busy: Int) { self.busy = busy }

        func open(_ index: Int) throws(TransportError) -> Int32 {
            attempts += 1
            if busy > 0 {
                busy -= 1
                throw TransportError.userChannel(index: index, step: .bind, errno: EBUSY)
            }
            var ends: [Int32] = [-1, -1]
            guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &ends) == 0 else { throw .notOpen }
            peers.append(ends[1])
            return ends[0]
        }
    }

    func testBusyBindIsRetriedByTheCallerThenOpens() throws {
        let kernel = Kernel(busy: 3)
        let closer = BackgroundCloser()
        let transport = UserChannelTransport(index: 0xFFFE, closer: closer, openSocket: kernel.open)
        // The transport's close runs on a thread of its own: the socket is closed once it
        // has returned, and by it alone (closed here too, its number, reused meanwhile by
        // a later test's file, would be closed under that test).
        defer {
            transport.close()
            XCTAssertTrue(closer.waitUntilClosed(transport.name, timeout: .seconds(30)))
            kernel.peers.forEach { Glibc.close($0) }
        }
        for _ in 0 ..< 3 {
            XCTAssertThrowsError(try transport.open()) { error in
                XCTAssertEqual(error as? TransportError, .adapterGoingDown(index: 0xFFFE))
                XCTAssertTrue("\(error)".contains("still being taken down"), "\(error)")
            }
        }
        try transport.open()
        XCTAssertTrue(transport.isOpen)
        XCTAssertEqual(kernel.attempts, 4, "one bind per open: no retries hidden inside")
    }

    func testLastingBusyBindBecomesTheRealErrorAndTheCountStartsAgain() {
        let kernel = Kernel(busy: 100)
        let transport = UserChannelTransport(index: 0xFFFE, closer: BackgroundCloser(), openSocket: kernel.open)
        transport.busyRetries = 2
        var errors: [TransportError?] = []
        for _ in 0 ..< 4 {
            XCTAssertThrowsError(try transport.open()) { errors.append($0 as? TransportError) }
        }
        XCTAssertEqual(errors, [.adapterGoingDown(index: 0xFFFE), .adapterGoingDown(index: 0xFFFE),
                                .adapterManagedByKernel(index: 0xFFFE), .adapterGoingDown(index: 0xFFFE)])
    }
}
