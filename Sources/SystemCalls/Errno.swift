#if canImport(Glibc)
import Glibc
#endif

/// A failed system call's `errno`, described in the C library's words.
public struct Errno: Error, Hashable, Sendable, CustomStringConvertible {
    public var code: Int32

    public init(_ code: Int32) { self.code = code }

    /// The calling thread's `errno` now.
    public static var current: Errno { Errno(errno) }

    public var description: String { String(cString: strerror(code)) }
}

/// What we were doing when a system call failed, on which file, and why it failed:
/// "cannot write /var/lib/beacon-gateway/roster.json.tmp: No space left on device".
public struct SystemCallFailure: Error, Hashable, Sendable, CustomStringConvertible {
    /// What we could not do, as a verb phrase: "write", "sync the directory".
    public var operation: String
    public var path: String
    public var errno: Errno

    public init(_ operation: String, _ path: String, _ errno: Errno) {
        self.operation = operation
        self.path = path
        self.errno = errno
    }

    public var description: String { "cannot \(operation) \(path): \(errno)" }
}
