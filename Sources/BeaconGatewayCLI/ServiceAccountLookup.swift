import Config
#if canImport(Glibc)
import Glibc
#endif

/// The system behind `ServiceAccess`: the user database from /etc/passwd and /etc/group
/// (`UserDatabase`: no NSS in a static executable), and owners and modes from stat(2).
struct ServiceAccountLookup {
    let users: UserDatabase

    /// The files as they are now (unreadable or absent files read as empty).
    static func load(fileSystem: some ConfigurationFileSystem = SystemFileSystem()) -> ServiceAccountLookup {
        ServiceAccountLookup(users: UserDatabase.load(fileSystem: fileSystem))
    }

    /// Owner, group and mode of `path` (following symlinks, as the service's open does).
    func entry(_ path: String) -> ServiceAccess.Entry? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return ServiceAccess.Entry(uid: info.st_uid, gid: info.st_gid, permissions: UInt32(info.st_mode) & 0o7777,
                                   ownerName: users.userName(info.st_uid), groupName: users.groupName(info.st_gid))
    }
}
