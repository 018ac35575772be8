public enum DoorRecordWrite: Hashable, Sendable {
    /// Replace the record stored under `key` (a person id or `LastHeardDigest.storageKey`).
    case save(key: String, record: [UInt8])
    case delete(key: String)

    public var key: String {
        switch self {
        case let .save(key, _), let .delete(key): key
        }
    }
}
