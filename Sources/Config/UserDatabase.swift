/// Users and groups from /etc/passwd and /etc/group, read as text: the release is a
/// static executable, and glibc's getpwnam/getgrouplist in one load NSS modules at run
/// time (a crash when they do not match). The service's user is a system user the
/// package creates in those files.
public struct UserDatabase: Sendable {
    public struct User: Sendable {
        public var name: String
        public var uid: UInt32
        public var gid: UInt32
    }

    private var usersByName: [String: User] = [:]
    private var userNames: [UInt32: String] = [:]
    private var groupNames: [UInt32: String] = [:]
    private var groupIDs: [String: UInt32] = [:]
    /// Supplementary groups by member name.
    private var memberships: [String: Set<UInt32>] = [:]

    /// Parses both files; malformed lines are skipped.
    public init(passwd: String, group: String) {
        for line in passwd.split(separator: "\n") {
            let fields = line.split(separator: ":", omittingEmptySubsequences: false)
            guard fields.count >= 4, !fields[0].isEmpty, let uid = UInt32(fields[2]), let gid = UInt32(fields[3]) else { continue }
            let user = User(name: String(fields[0]), uid: uid, gid: gid)
            if usersByName[user.name] == nil { usersByName[user.name] = user }
            if userNames[uid] == nil { userNames[uid] = user.name }
        }
        for line in group.split(separator: "\n") {
            let fields = line.split(separator: ":", omittingEmptySubsequences: false)
            guard fields.count >= 3, !fields[0].isEmpty, let gid = UInt32(fields[2]) else { continue }
            if groupNames[gid] == nil { groupNames[gid] = String(fields[0]) }
            if groupIDs[String(fields[0])] == nil { groupIDs[String(fields[0])] = gid }
            guard fields.count >= 4 else { continue }
            for member in fields[3].split(separator: ",") where !member.isEmpty {
                memberships[String(member), default: []].insert(gid)
            }
        }
    }

    /// The user `name` with its primary and supplementary groups; `nil` when there is none.
    public func account(named name: String) -> ServiceAccess.Account? {
        guard let user = usersByName[name] else { return nil }
        return ServiceAccess.Account(name: name, uid: user.uid, groups: (memberships[name] ?? []).union([user.gid]))
    }

    /// The files as they are now (unreadable or absent files read as empty).
    public static func load(fileSystem: some ConfigurationFileSystem = SystemFileSystem()) -> UserDatabase {
        func text(_ path: String) -> String {
            guard let snapshot = try? fileSystem.read(path, limit: 4 << 20) else { return "" }
            return String(decoding: snapshot.bytes, as: UTF8.self)
        }
        return UserDatabase(passwd: text("/etc/passwd"), group: text("/etc/group"))
    }

    public func user(named name: String) -> User? { usersByName[name] }
    public func groupID(named name: String) -> UInt32? { groupIDs[name] }
    public func userName(_ uid: UInt32) -> String { userNames[uid] ?? "\(uid)" }
    public func groupName(_ gid: UInt32) -> String { groupNames[gid] ?? "\(gid)" }
}
