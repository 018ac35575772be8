#if canImport(Glibc)
import Glibc
#endif
import SystemCalls
import XCTest

final class SystemCallTests: XCTestCase {
    func testAnInterruptedCallIsMadeAgainAndOtherFailuresAreReturned() {
        var calls = 0
        let result = SystemCall.retryingInterrupts { () -> Int in
            calls += 1
            if calls < 3 {
                errno = EINTR
                return -1
            }
            return 7
        }
        XCTAssertEqual(result, 7)
        XCTAssertEqual(calls, 3)

        calls = 0
        let failed = SystemCall.retryingInterrupts { () -> Int32 in
            calls += 1
            errno = EBADF
            return -1
        }
        XCTAssertEqual(failed, -1)
        XCTAssertEqual(errno, EBADF)
        XCTAssertEqual(calls, 1)
    }

    func testAFailureSaysWhatWhereAndWhy() {
        let failure = SystemCallFailure("write", "/x/roster.json.tmp", Errno(ENOSPC))
        XCTAssertEqual(failure.description, "cannot write /x/roster.json.tmp: No space left on device")
    }
}

final class FileDescriptorIOTests: XCTestCase {
    private func pipePair() -> (read: Int32, write: Int32) {
        var ends: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&ends), 0)
        return (ends[0], ends[1])
    }

    func testWritesEverythingAndReadsUpToTheLimit() throws {
        let ends = pipePair()
        defer { close(ends.read) }
        let bytes = (0 ..< 40_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        try FileDescriptorIO.writeAll(ends.write, bytes[...])
        close(ends.write)
        let first = try FileDescriptorIO.read(ends.read, upTo: 1_000)
        XCTAssertEqual(first, Array(bytes.prefix(1_000)))
        let rest = try FileDescriptorIO.read(ends.read, upTo: 1 << 20)
        XCTAssertEqual(rest, Array(bytes.dropFirst(1_000)))
        XCTAssertEqual(try FileDescriptorIO.read(ends.read, upTo: 10), [])
    }

    func testAFailedWriteSaysWhy() {
        // -1, never a number just closed: another thread may have reused that for a file.
        XCTAssertThrowsError(try FileDescriptorIO.writeAll(-1, [1, 2, 3])) { error in
            XCTAssertEqual(error as? Errno, Errno(EBADF))
        }
    }
}

final class AtomicFileTests: XCTestCase {
    private var directory = ""

    override func setUpWithError() throws {
        var template = Array("/tmp/atomic-file-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        directory = String(cString: try XCTUnwrap(made))
    }

    override func tearDown() {
        for name in ["file", "file.tmp", "elsewhere", "blocked", "blocked.tmp"] { unlink(directory + "/" + name) }
        rmdir(directory + "/blocked")
        rmdir(directory)
    }

    private func contents(_ path: String) throws -> [UInt8] {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { throw Errno.current }
        defer { close(fd) }
        return try FileDescriptorIO.read(fd, upTo: 1 << 20)
    }

    private func mode(_ path: String) -> mode_t {
        var info = stat()
        XCTAssertEqual(stat(path, &info), 0)
        return info.st_mode & 0o7777
    }

    func testReplacesTheFileWithExactlyTheModeAskedWhateverTheUmask() throws {
        let path = directory + "/file"
        let old = umask(0o077)
        defer { umask(old) }
        for durability in [AtomicFile.Durability.durable, .replaceOnly] {
            try AtomicFile.replace(path, with: Array("first\n".utf8), mode: 0o644, durability: durability)
            XCTAssertEqual(try contents(path), Array("first\n".utf8))
            XCTAssertEqual(mode(path), 0o644)
            try AtomicFile.replace(path, with: Array("second\n".utf8), mode: 0o600, durability: durability)
            XCTAssertEqual(try contents(path), Array("second\n".utf8))
            XCTAssertEqual(mode(path), 0o600)
            XCTAssertNotEqual(access(path + ".tmp", F_OK), 0, "no temporary file is left behind")
        }
    }

    func testALeftoverTemporaryFileWithAnotherModeDoesNotLeakIntoTheResult() throws {
        let path = directory + "/file"
        let fd = open(path + ".tmp", O_WRONLY | O_CREAT, 0o666)
        XCTAssertGreaterThanOrEqual(fd, 0)
        fchmod(fd, 0o666)
        close(fd)
        try AtomicFile.replace(path, with: [1, 2, 3], mode: 0o600, durability: .durable)
        XCTAssertEqual(mode(path), 0o600)
    }

    func testAPlantedSymbolicLinkAsTheTemporaryFileIsNotFollowed() throws {
        let path = directory + "/file"
        XCTAssertEqual(symlink(directory + "/elsewhere", path + ".tmp"), 0)
        XCTAssertThrowsError(try AtomicFile.replace(path, with: [1], mode: 0o600, durability: .durable)) { error in
            let failure = error as? SystemCallFailure
            XCTAssertEqual(failure?.operation, "create")
            XCTAssertEqual(failure?.path, path + ".tmp")
        }
        XCTAssertNotEqual(access(directory + "/elsewhere", F_OK), 0, "the link's target was not created")
    }

    func testAFailedRenameLeavesTheOldContentAndNoTemporaryFile() throws {
        // A directory in the way: rename(2) of a file over a non-empty directory fails.
        let path = directory + "/blocked"
        XCTAssertEqual(mkdir(path, 0o700), 0)
        let inside = open(path + "/file", O_WRONLY | O_CREAT, 0o600)
        close(inside)
        defer { unlink(path + "/file") }
        XCTAssertThrowsError(try AtomicFile.replace(path, with: [1], mode: 0o600, durability: .durable)) { error in
            XCTAssertEqual((error as? SystemCallFailure)?.operation, "rename over \(path)")
        }
        XCTAssertNotEqual(access(path + ".tmp", F_OK), 0)
    }

    func testTheDirectoryOfAPath() {
        XCTAssertEqual(AtomicFile.directory(of: "/var/lib/x/roster.json"), "/var/lib/x")
        XCTAssertEqual(AtomicFile.directory(of: "/roster.json"), "/")
        XCTAssertEqual(AtomicFile.directory(of: "roster.json"), ".")
    }
}
