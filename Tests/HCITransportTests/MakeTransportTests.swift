import HCI
import XCTest
@testable import HCITransport

final class MakeTransportTests: XCTestCase {
    func testMakeTransportPicksTheKind() throws {
        XCTAssertTrue(try makeTransport(.userChannel(index: 1)) is UserChannelTransport)
        XCTAssertTrue(try makeTransport(.tcp(host: "h", port: 1)) is TCPTransport)
        XCTAssertTrue(try makeTransport(.serial(path: "/dev/x", baud: 115_200)) is SerialTransport)
        XCTAssertTrue(try makeTransport(.btsnoop(path: "f")) is BTSnoopReplayTransport)
        XCTAssertEqual(try makeTransport(.userChannel(index: 1)).name, "hci1")
        XCTAssertFalse(try makeTransport(.tcp(host: "h", port: 1)).isOpen)
    }

    func testSerialSpeedsAreTheOnesTheSpecAccepts() {
        XCTAssertEqual(SerialBaudRate.supported, TransportSpec.standardBaudRates)
        XCTAssertEqual(SerialBaudRate.default, TransportSpec.defaultSerialBaudRate)
        XCTAssertThrowsError(try SerialTransport(path: "/dev/null", baud: 300))
    }
}
