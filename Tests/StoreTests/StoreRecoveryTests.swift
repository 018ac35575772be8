import XCTest
@testable import Store
#if canImport(Glibc)
import Glibc
#endif

/// Disk trouble at the store: failures classified, a corrupt database moved aside and a
/// fresh one started above every sequence the old one handed out, the sequence floor.
final class StoreRecoveryTests: StoreTestCase {
    private func makeOldStore(events: Int) throws {
        let store = try open()
        for index in 0 ..< events { try append(store, key: "old-\(index)") }
    }

    private func assertCorrupt(_ body: () throws -> Void, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try body(), file: file, line: line) { error in
            XCTAssertEqual((error as? StoreError)?.trouble, .corrupt, "\(error)", file: file, line: line)
        }
    }

    func testRandomBytesATextFileAndATruncatedDatabaseAreRefusedAsCorrupt() throws {
        var generator = SystemRandomNumberGenerator()
        write((0 ..< 8192).map { _ in UInt8.random(in: 0 ... 255, using: &generator) }, to: path)
        assertCorrupt { _ = try open() }
        write(Array("[gateway]\nid = \"not a database\"\n".utf8), to: path)
        assertCorrupt { _ = try open() }
        unlink(path)
        try makeOldStore(events: 200)
        let size = try XCTUnwrap(StoreFiles.size(path))
        XCTAssertEqual(truncate(path, __off_t(size / 2)), 0)
        assertCorrupt { _ = try open() }
    }

    func testAnEmptyFileIsANewDatabase() throws {
        write([], to: path)
        let store = try open()
        XCTAssertEqual(try append(store, key: "a"), 1)
    }

    func testACorruptDatabaseIsMovedAsideAndTheFreshOneContinuesAboveTheFloor() throws {
        try makeOldStore(events: 5)
        XCTAssertEqual(SequenceFloor.read(path + SequenceFloor.suffix), 1 + SequenceFloor.range,
                       "the first append reserved a range")
        write(Array("garbage".utf8), to: path)
        let (store, moved) = try Store.openRecovering(path: path, suffix: "20261124T101500Z")
        let aside = try XCTUnwrap(moved)
        XCTAssertEqual(aside.path, path + ".corrupt-20261124T101500Z")
        XCTAssertEqual(aside.firstSequence, 1 + SequenceFloor.range)
        XCTAssertTrue(fileNames().contains("gateway.sqlite.corrupt-20261124T101500Z"), "kept, not deleted")
        XCTAssertEqual(try append(store, key: "new"), 1 + SequenceFloor.range)
    }

    func testWithoutTheFloorFileTheSalvagedSequenceAndAMarginAreUsed() throws {
        try makeOldStore(events: 3)
        unlink(path + SequenceFloor.suffix)
        // As when a commit reports corruption deep in the file: the counter is still
        // readable, the floor file is gone.
        let moved = try XCTUnwrap(Store.moveAside(path: path, suffix: "x", reason: .corruptRow("test")))
        XCTAssertEqual(moved.salvagedNextSequence, 4)
        XCTAssertEqual(moved.firstSequence, 4 + SequenceFloor.range)
        let store = try open()
        XCTAssertEqual(try append(store, key: "new"), 4 + SequenceFloor.range)
    }

    func testAMoveAsideNeverOverwritesAnEarlierCopy() throws {
        write(Array("one".utf8), to: path)
        _ = try Store.openRecovering(path: path, suffix: "T")
        unlink(path)
        unlink(path + "-wal")
        unlink(path + "-shm")
        write(Array("two".utf8), to: path)
        let (_, moved) = try Store.openRecovering(path: path, suffix: "T")
        XCTAssertEqual(moved?.path, path + ".corrupt-T-2")
        XCTAssertEqual(StoreFiles.readText(path + ".corrupt-T"), "one")
        XCTAssertEqual(StoreFiles.readText(path + ".corrupt-T-2"), "two")
    }

    func testTheFloorIsWrittenOncePerRangeNotPerEvent() throws {
        let store = try open()
        try append(store, key: "first")
        let floorPath = path + SequenceFloor.suffix
        var before = stat()
        XCTAssertEqual(stat(floorPath, &before), 0)
        for index in 2 ... 50 { try append(store, key: "e\(index)") }
        var after = stat()
        XCTAssertEqual(stat(floorPath, &after), 0)
        XCTAssertEqual(before.st_ino, after.st_ino, "not replaced while the range lasts")
        XCTAssertEqual(SequenceFloor.read(floorPath), 1 + SequenceFloor.range)
    }

    func testALockHeldByAnotherProcessIsLockedNotAStall() throws {
        let store = try open(StoreConfiguration(busyTimeoutMillis: 20))
        try append(store, key: "a")
        let other = try SQLiteConnection(path: path, busyTimeoutMillis: 0)
        try other.execute("BEGIN EXCLUSIVE")
        XCTAssertThrowsError(try append(store, key: "b")) { error in
            XCTAssertEqual((error as? StoreError)?.trouble, .locked, "\(error)")
        }
        try other.execute("COMMIT")
        XCTAssertEqual(try append(store, key: "b"), 2)
    }

    func testAConnectionOpenedReadOnlyIsNotWritable() throws {
        let store = try open()
        XCTAssertTrue(store.isWritable)
        try store.checkWritable(nowMillis: 1)
        XCTAssertFalse(try Store(path: path, readOnly: true).isWritable)
    }

    func testTroubleKinds() {
        XCTAssertEqual(StoreError.sqlite(code: 13, message: "database or disk is full").trouble, .full)
        XCTAssertEqual(StoreError.sqlite(code: 10, message: "disk I/O error", systemErrno: ENOSPC).trouble, .full)
        XCTAssertEqual(StoreError.sqlite(code: 10, message: "disk I/O error", systemErrno: EROFS).trouble, .readOnly)
        XCTAssertEqual(StoreError.sqlite(code: 8, message: "attempt to write a readonly database").trouble, .readOnly)
        XCTAssertEqual(StoreError.sqlite(code: 11, message: "malformed").trouble, .corrupt)
        XCTAssertEqual(StoreError.sqlite(code: 26, message: "not a database").trouble, .corrupt)
        XCTAssertEqual(StoreError.sqlite(code: 5, message: "busy").trouble, .locked)
        XCTAssertEqual(StoreError.sqlite(code: 10, message: "disk I/O error", systemErrno: EIO).trouble, .io)
        XCTAssertEqual(StoreError.file(path: "/x", operation: "write", errno: ENOSPC).trouble, .full)
        XCTAssertNil(StoreError.outboxFull(undelivered: 1, maximum: 1).trouble, "a refusal, not disk trouble")
        XCTAssertNil(StoreError.sqlite(code: 19, message: "constraint").trouble)
    }
}
