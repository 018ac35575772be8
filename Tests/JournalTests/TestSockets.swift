#if canImport(Glibc)
import Glibc
#endif
import JournalFixtures
import XCTest

/// Runs `body` with fd 2 redirected to a pipe and returns what it wrote there.
func captureStandardError(_ body: () -> Void) -> String {
    var fds: [Int32] = [0, 0]
    guard pipe(&fds) == 0 else { XCTFail("pipe"); return "" }
    let saved = dup(2)
    dup2(fds[1], 2)
    close(fds[1])
    body()
    dup2(saved, 2)
    close(saved)
    var out: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
        let count = buffer.withUnsafeMutableBytes { read(fds[0], $0.baseAddress, $0.count) }
        if count <= 0 { break }
        out += buffer.prefix(count)
    }
    close(fds[0])
    return String(decoding: out, as: UTF8.self)
}

/// Sets an environment variable for the duration of `body`.
func withEnvironment<T>(_ name: String, _ value: String?, _ body: () throws -> T) rethrows -> T {
    let old = getenv(name).map { String(cString: $0) }
    if let value { setenv(name, value, 1) } else { unsetenv(name) }
    defer {
        if let old { setenv(name, old, 1) } else { unsetenv(name) }
    }
    return try body()
}

/// Parses a native journal datagram back into (name, value) pairs, both forms.
func parseJournalDatagram(_ bytes: [UInt8]) -> [(String, String)]? {
    var fields: [(String, String)] = []
    var index = 0
    while index < bytes.count {
        guard let end = bytes[index...].firstIndex(where: { $0 == UInt8(ascii: "=") || $0 == UInt8(ascii: "\n") }) else { return nil }
        let name = String(decoding: bytes[index ..< end], as: UTF8.self)
        if bytes[end] == UInt8(ascii: "=") {
            guard let lineEnd = bytes[end...].firstIndex(of: UInt8(ascii: "\n")) else { return nil }
            fields.append((name, String(decoding: bytes[(end + 1) ..< lineEnd], as: UTF8.self)))
            index = lineEnd + 1
        } else {
            guard end + 9 <= bytes.count else { return nil }
            var length: UInt64 = 0
            for (shift, byte) in bytes[(end + 1) ..< (end + 9)].enumerated() { length |= UInt64(byte) << (8 * UInt64(shift)) }
            let start = end + 9
            guard length <= UInt64(bytes.count - start - 1), bytes[start + Int(length)] == UInt8(ascii: "\n") else { return nil }
            fields.append((name, String(decoding: bytes[start ..< (start + Int(length))], as: UTF8.self)))
            index = start + Int(length) + 1
        }
    }
    return fields
}
