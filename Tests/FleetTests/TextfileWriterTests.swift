import Fleet
import Glibc
import XCTest

/// The textfile for node_exporter, which runs as another user: whole, and readable by it
/// under the service's umask of 0077 (docs/fleet.md, "Metrics").
final class TextfileWriterTests: XCTestCase {
    func testTheFileIsWholeAndWorldReadableUnderAUmaskOf0077() throws {
        var template = Array("/tmp/textfile-XXXXXX".utf8CString)
        guard let directory = mkdtemp(&template) else { return XCTFail("mkdtemp") }
        let path = String(cString: directory) + "/beacon_gateway.prom"
        defer {
            unlink(path)
            rmdir(directory)
        }
        let previous = umask(0o077)
        defer { umask(previous) }
        try TextfileWriter.write("beacon_gateway_up 1\n", to: path)
        try TextfileWriter.write("beacon_gateway_up 1\nbeacon_gateway_reports_total 7\n", to: path)
        var info = stat()
        XCTAssertEqual(stat(path, &info), 0)
        XCTAssertEqual(info.st_mode & 0o777, 0o644)
        XCTAssertNotEqual(access(path + ".tmp", F_OK), 0, "the temporary file is renamed away")
        let file = fopen(path, "r")
        defer { fclose(file) }
        var buffer = [CChar](repeating: 0, count: 256)
        let count = fread(&buffer, 1, 255, file)
        XCTAssertEqual(String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self),
                       "beacon_gateway_up 1\nbeacon_gateway_reports_total 7\n")
    }
}
