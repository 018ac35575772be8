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
