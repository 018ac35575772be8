import EventLoop
import Glibc
import XCTest
@testable import Fleet

/// Who may do what on the status socket (docs/security.md, "The status socket"): the
/// decision on credentials, and the credentials the kernel gives a UNIX socket's server.
final class StatusSocketAccessTests: XCTestCase {
    private let service = StatusSocketAccess(serviceUID: 998, serviceGID: 997, enrolGID: 1500)

    func testStatusForTheServicesGroupEnrolmentOnlyForRootTheServiceUserAndTheEnrolGroup() {
        let root = PeerCredentials(uid: 0, gid: 0)
        let serviceUser = PeerCredentials(uid: 998, gid: 997)
        let member = PeerCredentials(uid: 1000, gid: 1000, groups: [997])
        let memberByPrimaryGroup = PeerCredentials(uid: 1001, gid: 997)
        let installer = PeerCredentials(uid: 1002, gid: 1002, groups: [997, 1500])
        let stranger = PeerCredentials(uid: 1003, gid: 1003, groups: [27])
        for peer in [root, serviceUser, member, memberByPrimaryGroup, installer] {
            XCTAssertTrue(service.allows(peer, .status), "\(peer)")
        }
        XCTAssertFalse(service.allows(stranger, .status))
        XCTAssertTrue(service.allows(root, .enrol))
        XCTAssertTrue(service.allows(serviceUser, .enrol))
        XCTAssertTrue(service.allows(installer, .enrol))
        XCTAssertFalse(service.allows(member, .enrol), "the service's group reads status, it does not enrol")
        XCTAssertFalse(service.allows(memberByPrimaryGroup, .enrol))
        XCTAssertFalse(service.allows(stranger, .enrol))
        XCTAssertFalse(service.allows(nil, .status), "unknown credentials: nothing")
        XCTAssertFalse(service.allows(nil, .enrol))
        // Without an enrolment group, only root and the service's user enrol.
        let noGroup = StatusSocketAccess(serviceUID: 998, serviceGID: 997)
        XCTAssertFalse(noGroup.allows(installer, .enrol))
        XCTAssertTrue(noGroup.allows(serviceUser, .enrol))
    }

    func testTheServerReadsEachUnixClientsCredentialsAndClosesThoseItDoesNotAdmit() throws {
        let path = NSTemporaryDirectory() + "status-access-\(getpid()).sock"
        defer { unlink(path) }
        let virtual = VirtualEventLoop()
        let server = try LocalServer(
            loop: virtual.loop, address: .unix(path: path),
            limits: .init(terminator: [0x0A], maxRequestBytes: 64, timeLimit: .seconds(5)), maxConnections: 4,
            answer: { _ in Array("ok\n".utf8) }, refusal: { _ in [] })
        var seen: [PeerCredentials?] = []
        var admitting = true
        server.admits = { peer in
            seen.append(peer)
            return admitting
        }
        var takenBy: PeerCredentials?
        server.takeOver = { _, peer in
            takenBy = peer
            return nil
        }
        let first = try XCTUnwrap(UnixSocketClient.connect(path: path))
        defer { close(first) }
        try virtual.runReady()
        XCTAssertEqual(server.openConnections, 1)
        let me = try XCTUnwrap(seen.first ?? nil)
        XCTAssertEqual(me.uid, geteuid())
        XCTAssertEqual(me.gid, getegid())
        XCTAssertEqual(me.pid, getpid())
        _ = Array("status\n".utf8).withUnsafeBytes { send(first, $0.baseAddress, $0.count, 0) }
        try virtual.runReady()
        XCTAssertEqual(takenBy, me, "a take-over is told who asked")

        admitting = false
        let second = try XCTUnwrap(UnixSocketClient.connect(path: path))
        defer { close(second) }
        try virtual.runReady()
        XCTAssertEqual(server.refusedPeers, 1)
        var byte: UInt8 = 0
        XCTAssertEqual(recv(second, &byte, 1, 0), 0, "closed at once, unanswered")
        server.close()
    }
}
