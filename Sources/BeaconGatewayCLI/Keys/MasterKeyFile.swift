import PresenceProof
import SystemCalls
import Config

#if canImport(Glibc)
import Glibc
#endif

/// Reading and creating master key files with the checks of docs/security.md; messages name the
/// file, never its content.
enum MasterKeyFile {
    struct Failure: Error {
        var message: String
    }

    /// Reads a master key file that must be a regular file closed to group and others.
    static func read(path: String, fileSystem: some ConfigurationFileSystem = SystemFileSystem()) -> Result<MasterKey, Failure> {
        let snapshot: FileSnapshot
        do {
            snapshot = try fileSystem.read(path, limit: 4096)
        } catch {
            return .failure(Failure(message: "\(path) \(error)"))
        }
        guard snapshot.isRegularFile else { return .failure(Failure(message: "\(path) is not a regular file")) }
        if let exposed = SecretFileRule.exposure(of: path, permissions: snapshot.permissions & 0o7777) {
            return .failure(Failure(message: exposed))
        }
        guard !snapshot.isTruncated, let key = MasterKey(fileContent: snapshot.bytes) else {
            return .failure(Failure(message: "\(path) must contain a 256-bit key as 64 hex digits"))
        }
        return .success(key)
    }

    /// Who a new key file belongs to: the service's user when root makes it and that user
    /// exists (the service then reads it; a root-owned 0600 key would stop it), else
    /// whoever runs the command.
    enum Owner: Equatable {
        case serviceUser
        case caller
    }

    /// Creates `path` with mode 0600 and writes `content`; refuses to replace anything
    /// already there (O_EXCL, and O_NOFOLLOW so a planted symlink is not followed). Made by
    /// root, the file goes to the service's user (`SecretFileRule.serviceUser`) when it
    /// exists.
    static func create(path: String, content: String) -> Result<Owner, Failure> {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            let code = errno
            if code == EEXIST { return .failure(Failure(message: "\(path) already exists; refusing to overwrite a master key")) }
            return .failure(Failure(message: "cannot create \(path): \(String(cString: strerror(code)))"))
        }
        // The umask may only have taken bits away; make the mode exact anyway.
        _ = fchmod(fd, 0o600)
        var failure: Failure?
        var owner = Owner.caller
        if geteuid() == 0, let service = ServiceAccountLookup.load().users.user(named: SecretFileRule.serviceUser) {
            if fchown(fd, service.uid, service.gid) == 0 {
                owner = .serviceUser
            } else {
                failure = Failure(message: "cannot give \(path) to the user \(SecretFileRule.serviceUser): \(String(cString: strerror(errno)))")
            }
        }
        if failure == nil {
            do throws(Errno) {
                try FileDescriptorIO.writeAll(fd, Array(content.utf8))
            } catch {
                failure = Failure(message: "cannot write \(path): \(error)")
            }
        }
        if failure == nil, fsync(fd) != 0 {
            failure = Failure(message: "cannot sync \(path): \(String(cString: strerror(errno)))")
        }
        close(fd)
        if let failure {
            // A half-written key file would later be refused as malformed; take it away now.
            unlink(path)
            return .failure(failure)
        }
        return .success(owner)
    }
}
