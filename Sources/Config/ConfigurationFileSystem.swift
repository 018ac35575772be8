/// The configuration's window on files: the config file itself and the secret files it
/// names. A seam, so tests can present files of any mode and content without a disk.
public protocol ConfigurationFileSystem: Sendable {
    /// Opens `path` for reading and returns what it is, its permission bits and up to
    /// `limit` bytes of it (none when `limit` is 0, which only proves it can be read).
    func read(_ path: String, limit: Int) throws(FileAccessError) -> FileSnapshot
}

/// A file as seen through one open descriptor.
public struct FileSnapshot: Hashable, Sendable {
    public var isRegularFile: Bool
    /// `st_mode & 0o7777`.
    public var permissions: UInt32
    /// At most the requested limit.
    public var bytes: [UInt8]
    /// The file holds more than was read.
    public var isTruncated: Bool

    public init(isRegularFile: Bool = true, permissions: UInt32, bytes: [UInt8] = [], isTruncated: Bool = false) {
        self.isRegularFile = isRegularFile
        self.permissions = permissions
        self.bytes = bytes
        self.isTruncated = isTruncated
    }
}

/// Why a file could not be read, phrased for the person who has to fix it.
public enum FileAccessError: Error, Hashable, Sendable, CustomStringConvertible {
    case notFound
    case permissionDenied
    case other(errno: Int32, description: String)

    public var description: String {
        switch self {
        case .notFound: "does not exist"
        case .permissionDenied: "cannot be read by this user (permission denied)"
        case let .other(_, description): "cannot be read (\(description))"
        }
    }
}
