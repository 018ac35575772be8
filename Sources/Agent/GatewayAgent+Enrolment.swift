import Config
import Enrolment
import Fleet
import HostDrivers

/// Enrolment asked for on the status socket (SPEC §15): the request is checked here, the
/// window is `EnrolmentDriver`'s, built at the first request on the link the door runs on.
extension GatewayAgent {
    /// The status socket's claim on an enrolment request (see `LocalServer.takeOver`): only
    /// for a peer allowed to enrol (docs/security.md, "The status socket"); any other is
    /// told why and gets no window, so never an IRK.
    func enrolmentTakeOver(_ head: [UInt8], peer: PeerCredentials?) -> LocalServer.TakeOver? {
        guard EnrolmentChannel.isRequest(head: head) else { return nil }
        let access = statusSocketAccess()
        guard access.allows(peer, .enrol) else {
            return LocalServer.TakeOver(maxLineBytes: EnrolmentChannel.maxAnswerBytes) { [unowned self] stream in
                self.log.log(.warning, "enrolment refused to a peer not allowed to enrol", [
                    "uid": peer.map { "\($0.uid)" } ?? "unknown", "pid": peer.map { "\($0.pid)" } ?? "unknown",
                ])
                stream.send(EnrolmentChannel.line(.failed(
                    "not allowed to enrol through the agent: that takes root, the service's user, or a member of "
                        + (self.configuration.security.enrollGroup.map { "the group \($0) ([security] enroll_group)" }
                            ?? "the group named by [security] enroll_group (none is set)"))))
                stream.finish()
            }
        }
        return LocalServer.TakeOver(maxLineBytes: EnrolmentChannel.maxAnswerBytes) { [unowned self] stream in
            self.openEnrolment(head, stream: stream)
        }
    }

    /// Who may do what on the status socket: the agent's own user and group, and
    /// `[security] enroll_group` looked up in /etc/group when first needed after it is set
    /// or changed.
    func statusSocketAccess() -> StatusSocketAccess {
        guard let name = configuration.security.enrollGroup else { return .ofThisProcess() }
        if enrollGroupLookup?.name != name {
            let gid = UserDatabase.load().groupID(named: name)
            if gid == nil {
                log.log(.warning, "[security] enroll_group names no group in /etc/group: only root and the service's user may enrol",
                        ["group": name])
            }
            enrollGroupLookup = (name, gid)
        }
        return .ofThisProcess(enrolGID: enrollGroupLookup?.gid)
    }

    private func openEnrolment(_ head: [UInt8], stream: LocalStream) {
        guard let request = EnrolmentChannel.request(head: head),
              Identifier.isValid(request.personId), Identifier.isValid(request.tagId) else {
            return refuseEnrolment(stream, "a malformed enrolment request (person and tag ids: 1 to 64 letters, digits or . _ - : @)")
        }
        guard let driver = enrolmentDriver() else {
            return refuseEnrolment(stream, "enrolment is not available on this door (see the journal)")
        }
        driver.open(request, stream: stream)
    }

    private func refuseEnrolment(_ stream: LocalStream, _ reason: String) {
        EnrolmentDriver.refuse(stream, reason, log: log)
    }

    /// The driver, built once: on the proofs' data path when the door makes connections
    /// (one data path per controller), else on one of its own.
    func enrolmentDriver() -> EnrolmentDriver? {
        if let enrolment { return enrolment }
        guard let link else { return nil }
        let dataPath: DataPathDriver
        if let proofs {
            dataPath = proofs.dataPath
        } else {
            dataPath = DataPathDriver(link: link)
            hearDataPath(dataPath)
        }
        do {
            enrolment = try EnrolmentDriver(link: link, dataPath: dataPath, doorBeacon: doorBeacon, connect: proofs?.connect,
                                            activeScanning: configuration.bluetooth.scan == .active,
                                            gatewayId: configuration.gateway.id,
                                            identities: { [unowned self] person in
                                                IdentityCheck(enrolling: person, persons: self.configuration.personIdentities,
                                                              recentlySeen: self.core.recentlyResolvedAddresses)
                                            }, log: log)
            startDrivers()
        } catch {
            log.log(.error, "cannot serve the enrolment GATT database", ["error": "\(error)"])
        }
        return enrolment
    }
}
