import Config
import XCTest

/// `check-config` run by root asks whether the service's user could read what it reads
/// (docs/security.md, "Secret files"): decided from owners and modes.
final class ServiceAccessTests: XCTestCase {
    private let service = ServiceAccess.Account(name: "beacon-gateway", uid: 120, groups: [120, 997])
    private var files: [String: ServiceAccess.Entry] = [
        "/etc": .init(uid: 0, gid: 0, permissions: 0o755, ownerName: "root", groupName: "root"),
        "/etc/beacon-gateway": .init(uid: 0, gid: 120, permissions: 0o750, ownerName: "root", groupName: "beacon-gateway"),
        "/etc/beacon-gateway/gateway.toml": .init(uid: 0, gid: 120, permissions: 0o640, ownerName: "root", groupName: "beacon-gateway"),
        "/etc/beacon-gateway/token": .init(uid: 120, gid: 120, permissions: 0o600, ownerName: "beacon-gateway", groupName: "beacon-gateway"),
        "/etc/beacon-gateway/master.key": .init(uid: 0, gid: 0, permissions: 0o600, ownerName: "root", groupName: "root"),
        "/root": .init(uid: 0, gid: 0, permissions: 0o700, ownerName: "root", groupName: "root"),
        "/root/token": .init(uid: 120, gid: 120, permissions: 0o600, ownerName: "beacon-gateway", groupName: "beacon-gateway"),
        "/etc/ssl/ca.pem": .init(uid: 0, gid: 0, permissions: 0o644, ownerName: "root", groupName: "root"),
        "/etc/ssl": .init(uid: 0, gid: 0, permissions: 0o755, ownerName: "root", groupName: "root"),
    ]

    private func problem(_ path: String, _ kind: ServiceAccess.Kind = .secret) -> String? {
        ServiceAccess.readProblem(path: path, kind: kind, account: service) { self.files[$0] }
    }

    func testWhatThePackageLaysOutIsReadable() {
        XCTAssertNil(problem("/etc/beacon-gateway/gateway.toml", .shared), "group read through the group")
        XCTAssertNil(problem("/etc/beacon-gateway/token"), "owned by the service")
        XCTAssertNil(problem("/etc/ssl/ca.pem", .shared), "world-readable")
    }

    func testARootOwnedSecretIsNamedWithTheFixThatWorks() {
        XCTAssertEqual(problem("/etc/beacon-gateway/master.key"),
                       "the service (user beacon-gateway) cannot read /etc/beacon-gateway/master.key (owner root:root, mode 0600); "
                           + "run `chown beacon-gateway: /etc/beacon-gateway/master.key && chmod 600 /etc/beacon-gateway/master.key`")
    }

    func testAFileInADirectoryTheServiceCannotEnterIsNamedByTheDirectory() {
        XCTAssertEqual(problem("/root/token"),
                       "the service (user beacon-gateway) cannot enter /root (owner root:root, mode 0700); "
                           + "run `chgrp beacon-gateway /root && chmod g+x /root`")
    }

    func testASharedFileTheGroupCannotReadGetsTheGroupFix() {
        files["/etc/beacon-gateway/gateway.toml"]?.permissions = 0o600
        XCTAssertEqual(problem("/etc/beacon-gateway/gateway.toml", .shared),
                       "the service (user beacon-gateway) cannot read /etc/beacon-gateway/gateway.toml (owner root:beacon-gateway, mode 0600); "
                           + "run `chgrp beacon-gateway /etc/beacon-gateway/gateway.toml && chmod g+r /etc/beacon-gateway/gateway.toml`")
    }

    func testAMissingFileIsLeftToTheConfigurationsOwnCheck() {
        XCTAssertNil(problem("/etc/beacon-gateway/absent"))
        XCTAssertNil(problem("relative/path"))
    }

    func testTheUserDatabaseGivesPrimaryAndSupplementaryGroupsAndSkipsMalformedLines() {
        let users = UserDatabase(
            passwd: "root:x:0:0:root:/root:/bin/bash\nbroken line\nbeacon-gateway:x:120:120::/var/lib/beacon-gateway:/usr/sbin/nologin\n",
            group: "root:x:0:\ngpio:x:997:beacon-gateway,pi\nbeacon-gateway:x:120:\nbad:x:notanumber:beacon-gateway\n")
        let account = users.account(named: "beacon-gateway")
        XCTAssertEqual(account?.uid, 120)
        XCTAssertEqual(account?.groups, [120, 997])
        XCTAssertNil(users.account(named: "nobody-here"))
        XCTAssertEqual(users.userName(120), "beacon-gateway")
        XCTAssertEqual(users.groupName(997), "gpio")
        XCTAssertEqual(users.groupName(4242), "4242")
    }
}
