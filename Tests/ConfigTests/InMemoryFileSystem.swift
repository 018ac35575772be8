import Config

/// Files with any mode and content, without a disk; everything else does not exist.
struct InMemoryFileSystem: ConfigurationFileSystem {
    var files: [String: FileSnapshot] = [:]
    var unreadable: Set<String> = []

    func read(_ path: String, limit: Int) throws(FileAccessError) -> FileSnapshot {
        if unreadable.contains(path) { throw .permissionDenied }
        guard var file = files[path] else { throw .notFound }
        if file.bytes.count > limit {
            file.bytes = Array(file.bytes.prefix(limit))
            file.isTruncated = true
        }
        return file
    }

    mutating func add(_ path: String, mode: UInt32 = 0o600, _ content: String) {
        files[path] = FileSnapshot(permissions: mode, bytes: Array(content.utf8))
    }
}
