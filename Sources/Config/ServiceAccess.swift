/// Whether the service's account can read the files its configuration names, decided from
/// owners and modes: `check-config` run by root reads everything, while the service runs
/// as the user `beacon-gateway` and stops at its start on a file it cannot read
/// (docs/security.md, "Secret files"). Pure: the caller supplies the account and a way
/// to look files up.
public enum ServiceAccess {
    /// An account: its user id and every group it is in.
    public struct Account: Sendable {
        public var name: String
        public var uid: UInt32
        public var groups: Set<UInt32>

        public init(name: String, uid: UInt32, groups: Set<UInt32>) {
            self.name = name
            self.uid = uid
            self.groups = groups
        }
    }

    /// A file's owner, group and permission bits.
    public struct Entry: Sendable {
        public var uid: UInt32
        public var gid: UInt32
        public var permissions: UInt32
        public var ownerName: String
        public var groupName: String

        public init(uid: UInt32, gid: UInt32, permissions: UInt32, ownerName: String, groupName: String) {
            self.uid = uid
            self.gid = gid
            self.permissions = permissions
            self.ownerName = ownerName
            self.groupName = groupName
        }
    }

    /// What a file is to the service: a secret (only the service may read it) or a file it
    /// shares with its group (the configuration without inline secrets, a CA bundle).
    public enum Kind: Sendable {
        case secret
        case shared
    }

    /// Why `account` cannot read the file at the absolute `path`, with the commands that
    /// fix it; `nil` when it can (or when `lookUp` knows nothing of a component: whether
    /// the file exists is the configuration's own check).
    public static func readProblem(path: String, kind: Kind, account: Account,
                                   lookUp: (String) -> Entry?) -> String? {
        guard path.hasPrefix("/") else { return nil }
        var directory = ""
        let components = path.split(separator: "/")
        for component in components.dropLast() {
            directory += "/" + component
            guard let entry = lookUp(directory) else { return nil }
            if !allows(entry, account, read: false) {
                return "the service (user \(account.name)) cannot enter \(directory) (\(describe(entry))); "
                    + "run `chgrp \(account.name) \(directory) && chmod g+x \(directory)`"
            }
        }
        guard let entry = lookUp(path), !allows(entry, account, read: true) else { return nil }
        let fix = switch kind {
        case .secret: "chown \(account.name): \(path) && chmod 600 \(path)"
        case .shared: "chgrp \(account.name) \(path) && chmod g+r \(path)"
        }
        return "the service (user \(account.name)) cannot read \(path) (\(describe(entry))); run `\(fix)`"
    }

    private static func allows(_ entry: Entry, _ account: Account, read: Bool) -> Bool {
        if account.uid == 0 { return true }
        let (owner, group, other): (UInt32, UInt32, UInt32) = read ? (0o400, 0o040, 0o004) : (0o100, 0o010, 0o001)
        if entry.uid == account.uid { return entry.permissions & owner != 0 }
        if account.groups.contains(entry.gid) { return entry.permissions & group != 0 }
        return entry.permissions & other != 0
    }

    private static func describe(_ entry: Entry) -> String {
        "owner \(entry.ownerName):\(entry.groupName), mode \(octal(entry.permissions & 0o7777))"
    }
}
