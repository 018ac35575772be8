import XCTest
@testable import HCI

final class TransportSpecTests: XCTestCase {
    func testValidForms() throws {
        XCTAssertEqual(try TransportSpec(parsing: "hci0"), .userChannel(index: 0))
        XCTAssertEqual(try TransportSpec(parsing: "hci12"), .userChannel(index: 12))
        XCTAssertEqual(try TransportSpec(parsing: "tcp:127.0.0.1:9000"), .tcp(host: "127.0.0.1", port: 9000))
        XCTAssertEqual(try TransportSpec(parsing: "tcp:localhost:1"), .tcp(host: "localhost", port: 1))
        XCTAssertEqual(try TransportSpec(parsing: "tcp:[::1]:65535"), .tcp(host: "::1", port: 65535))
        XCTAssertEqual(try TransportSpec(parsing: "serial:/dev/ttyACM0"), .serial(path: "/dev/ttyACM0", baud: 1_000_000))
        XCTAssertEqual(try TransportSpec(parsing: "serial:/dev/ttyUSB1@115200"), .serial(path: "/dev/ttyUSB1", baud: 115_200))
        XCTAssertEqual(try TransportSpec(parsing: "btsnoop:/tmp/a b.log"), .btsnoop(path: "/tmp/a b.log"))
    }

    func testDescriptionRoundTrips() throws {
        for text in ["hci3", "tcp:10.0.0.1:80", "tcp:[fe80::1]:9000", "serial:/dev/ttyAMA0@3000000",
                     "serial:/dev/ttyACM0", "btsnoop:x.log"] {
            let spec = try TransportSpec(parsing: text)
            XCTAssertEqual(spec.description, text, "written back as the user wrote it (default baud left out)")
            XCTAssertEqual(try TransportSpec(parsing: spec.description), spec, text)
        }
    }

    func testInvalidFormsSayWhatIsValid() {
        let invalid = [
            "", "hci", "hci-1", "hci+1", "hci 0", "hci99999999999", "hci65535", "bluetooth0",
            "tcp:", "tcp:host", "tcp::80", "tcp:host:0", "tcp:host:65536", "tcp:host:http", "tcp:::1:80",
            "tcp:[::1]", "tcp:[::1:80", "tcp:[]:80", "tcp:a b:80", "tcp:a/b:80", "serial:", "serial:@115200", "serial:/dev/x@fast", "btsnoop:",
        ]
        for text in invalid {
            XCTAssertThrowsError(try TransportSpec(parsing: text), text) { error in
                guard case .invalid(let spec, _)? = error as? TransportSpecError else {
                    return XCTFail("\(text): \(error)")
                }
                XCTAssertEqual(spec, text)
                XCTAssertTrue("\(error)".contains("tcp:HOST:PORT"), "\(error)")
                XCTAssertTrue("\(error)".contains("btsnoop:FILE"), "\(error)")
            }
        }
    }

    func testUnsupportedBaudListsTheSupportedOnes() {
        XCTAssertThrowsError(try TransportSpec(parsing: "serial:/dev/ttyACM0@12345")) { error in
            XCTAssertEqual(error as? TransportSpecError, .unsupportedBaudRate(12345))
            XCTAssertTrue("\(error)".contains("1000000"), "\(error)")
        }
    }
}
