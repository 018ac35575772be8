#if canImport(Glibc)
import Glibc
#endif
import CLinux

/// Who is at the other end of a UNIX socket (SO_PEERCRED, SO_PEERGROUPS), as of its
/// connect(): what the status socket decides each connection's rights by
/// (`StatusSocketAccess`, docs/security.md).
public struct PeerCredentials: Hashable, Sendable {
    public var pid: Int32
    public var uid: UInt32
    public var gid: UInt32
    /// Supplementary groups (empty when the kernel cannot tell).
    public var groups: [UInt32]

    public init(pid: Int32 = 0, uid: UInt32, gid: UInt32, groups: [UInt32] = []) {
        self.pid = pid
        self.uid = uid
        self.gid = gid
        self.groups = groups
    }

    public func isMember(of group: UInt32) -> Bool {
        gid == group || groups.contains(group)
    }

    /// Most supplementary groups read; a peer in more is judged by the first ones and its
    /// primary group (a denial at worst).
    static let maxGroups = 1024

    /// The peer of the connected UNIX socket `fd`; nil when the kernel does not say.
    static func of(socket fd: Int32) -> PeerCredentials? {
        var pid: Int32 = 0
        var uid: UInt32 = 0
        var gid: UInt32 = 0
        guard clinux_peer_credentials(fd, &pid, &uid, &gid) == 0 else { return nil }
        var groups = [UInt32](repeating: 0, count: maxGroups)
        let count = groups.withUnsafeMutableBufferPointer { clinux_peer_groups(fd, $0.baseAddress, Int32($0.count)) }
        return PeerCredentials(pid: pid, uid: uid, gid: gid, groups: count > 0 ? Array(groups[..<Int(count)]) : [])
    }
}

/// Who may do what on the status socket (docs/security.md, "The status socket"): `status`
/// for root, the service's user and its group; enrolment for root, the service's user and
/// members of `[security] enroll_group`. A peer whose credentials are unknown may do nothing.
public struct StatusSocketAccess: Hashable, Sendable {
    public enum Right: Hashable, Sendable {
        case status
        case enrol
    }

    /// The user and group the agent runs as (the socket file's owner and group).
    public var serviceUID: UInt32
    public var serviceGID: UInt32
    /// `[security] enroll_group`, looked up; nil when not configured or not found.
    public var enrolGID: UInt32?

    public init(serviceUID: UInt32, serviceGID: UInt32, enrolGID: UInt32? = nil) {
        self.serviceUID = serviceUID
        self.serviceGID = serviceGID
        self.enrolGID = enrolGID
    }

    /// The agent's own user and group.
    public static func ofThisProcess(enrolGID: UInt32? = nil) -> StatusSocketAccess {
        StatusSocketAccess(serviceUID: geteuid(), serviceGID: getegid(), enrolGID: enrolGID)
    }

    public func allows(_ peer: PeerCredentials?, _ right: Right) -> Bool {
        guard let peer else { return false }
        if peer.uid == 0 || peer.uid == serviceUID { return true }
        let mayEnrol = enrolGID.map(peer.isMember) ?? false
        switch right {
        case .status: return peer.isMember(of: serviceGID) || mayEnrol
        case .enrol: return mayEnrol
        }
    }
}
