import XCTest
@testable import Store
#if canImport(Glibc)
import Glibc
#endif

/// A fresh directory per test, removed afterwards.
class StoreTestCase: XCTestCase {
    var directory = ""

    override func setUpWithError() throws {
        var template = Array("/tmp/store-test-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        XCTAssertNotNil(made)
        directory = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    override func tearDownWithError() throws {
        // Every file the store made: the database, its logs, the sequence floor, copies
        // moved aside.
        for name in fileNames() {
            unlink(directory + "/" + name)
        }
        XCTAssertEqual(rmdir(directory), 0)
    }

    var path: String { Store.path(stateDirectory: directory) }

    /// The names in the test's directory, sorted.
    func fileNames() -> [String] {
        guard let listing = opendir(directory) else { return [] }
        defer { closedir(listing) }
        var names: [String] = []
        while let entry = readdir(listing) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }

    /// Replaces the file at `path` with `bytes`.
    func write(_ bytes: [UInt8], to path: String) {
        let fd = Glibc.open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        XCTAssertGreaterThanOrEqual(fd, 0)
        XCTAssertEqual(bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }, bytes.count)
        close(fd)
    }

    func open(_ configuration: StoreConfiguration = .init()) throws -> Store {
        try Store(path: path, configuration: configuration)
    }

    @discardableResult
    func append(_ store: Store, key: String, person: String = "u_1", at millis: Int64 = 1_000) throws -> Int64? {
        var sequence: Int64?
        try store.commit { (transaction: inout StoreTransaction) throws(StoreError) in
            sequence = try transaction.appendEvent(idempotencyKey: key, type: "checkin", personId: person, createdAtMillis: millis) { seq in
                Array("{\"sequence\": \(seq), \"key\": \"\(key)\"}".utf8)
            }
        }
        return sequence
    }
}
