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
        for name in ["gateway.sqlite", "gateway.sqlite-wal", "gateway.sqlite-shm"] {
            unlink(directory + "/" + name)
        }
        rmdir(directory)
    }

    var path: String { Store.path(stateDirectory: directory) }

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
