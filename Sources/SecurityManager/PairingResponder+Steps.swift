import BluetoothCrypto
import EventLoop
import HCI

/// One pairing in progress: what was negotiated and computed so far.
struct Pairing: Sendable {
    enum Step: Sendable, Equatable {
        case awaitingPublicKey
        case awaitingRandom
        /// Our random sent: waiting for the peer's DHKey check and, for Numeric
        /// Comparison, the person's yes.
        case awaitingCheck
        /// Our DHKey check sent: the LTK is ready for the controller.
        case awaitingEncryption
        case awaitingIdentityInformation
        case awaitingIdentityAddress(irk: SecretKey128)

        var isAfterChecks: Bool {
            switch self {
            case .awaitingPublicKey, .awaitingRandom, .awaitingCheck: false
            case .awaitingEncryption, .awaitingIdentityInformation, .awaitingIdentityAddress: true
            }
        }
    }

    let request: PairingFeatures
    let response: PairingFeatures
    let method: PairingMethod
    let keyPair: P256KeyPair
    /// Nb.
    let nonce: Octets128
    var step: Step = .awaitingPublicKey
    var peerKey: P256PublicKey?
    var dhKey: DHKey?
    /// Ea as we compute it, and Eb.
    var expectedPeerCheck: Octets128?
    var ourCheck: Octets128?
    var ltk: SecretKey128?
    var peerCheckVerified = false
    /// Numeric Comparison: the person said the values match.
    var valueConfirmed = false
}

extension PairingResponder {
    // MARK: Phase 1: features

    mutating func idle(_ parsed: Result<SMPCommand, SMPCommand.Malformed>, now: Instant) -> [PairingAction] {
        let command: SMPCommand
        switch parsed {
        case .failure(let malformed):
            // No pairing to end: answer and stay ready for a genuine request.
            counters.refusals += 1
            return [.send(Self.pairingFailed(Self.refusal(malformed).reason))]
        case .success(let parsed):
            command = parsed
        }
        switch command {
        case .pairingRequest(let request):
            return pairingRequested(request, now: now)
        case .pairingFailed:
            counters.ignored += 1
            return []
        case .other(let code) where Self.neverTaken(code):
            counters.refusals += 1
            return [.send(Self.pairingFailed(.commandNotSupported))]
        default:
            counters.refusals += 1
            return [.send(Self.pairingFailed(.unspecifiedReason))]
        }
    }

    /// Commands a responder never takes: the initiator's answer, the peripheral's request,
    /// keypress notifications (never negotiated).
    static func neverTaken(_ code: SMPCode) -> Bool {
        code == .pairingResponse || code == .securityRequest || code == .pairingKeypressNotification
    }

    private mutating func pairingRequested(_ request: PairingFeatures, now: Instant) -> [PairingAction] {
        guard configuration.acceptsPairing else {
            counters.refusals += 1
            return [.send(Self.pairingFailed(.pairingNotSupported)), .failed(.refused(.pairingNotAccepted))]
        }
        if let refusal = Self.refusal(of: request) { return refuse(refusal) }
        // Numeric Comparison needs a display with yes/no or a keyboard on the phone's side
        // (§2.3.5.1, Table 2.8); a phone without either is refused, never paired by Just
        // Works in its place. A Just Works window answers NoInputNoOutput, which also keeps
        // a keyboard-only phone from Passkey Entry.
        let numeric = configuration.method == .numericComparison
        if numeric, !request.ioCapability.canCompareDigits { return refuse(.cannotCompareDigits(request.ioCapability)) }
        guard let keyPair = secrets.keyPair() else { return refuse(.noKeyPair) }
        var requirements: AuthenticationRequirements = [.bonding, .secureConnections]
        if numeric { requirements.insert(.mitm) }
        // Only identity keys, and only those the initiator offered: in Secure Connections
        // the LTK is derived, not distributed (§3.6.1).
        let response = PairingFeatures(
            ioCapability: numeric ? .displayYesNo : .noInputNoOutput, oobDataFlag: 0, authenticationRequirements: requirements,
            maximumEncryptionKeySize: 16,
            initiatorKeyDistribution: request.initiatorKeyDistribution.intersection(.identityKey),
            responderKeyDistribution: request.responderKeyDistribution.intersection(.identityKey))
        let pairing = Pairing(request: request, response: response, method: configuration.method,
                              keyPair: keyPair, nonce: secrets.nonce())
        state = .pairing(pairing)
        return send([response.pdu(.pairingResponse)], now: now)
    }

    static func refusal(of request: PairingFeatures) -> PairingRefusal? {
        guard request.ioCapability.isDefined, request.oobDataFlag <= 1, (7 ... 16).contains(request.maximumEncryptionKeySize)
        else { return .invalidParameters(.pairingRequest) }
        guard request.authenticationRequirements.contains(.secureConnections) else { return .legacyPairing }
        guard request.maximumEncryptionKeySize == 16 else { return .encryptionKeyTooShort(request.maximumEncryptionKeySize) }
        guard request.oobDataFlag == 0 else { return .outOfBandRequested }
        return nil
    }

    // MARK: Phases 2 and 3

    mutating func step(_ command: SMPCommand, in pairing: inout Pairing, now: Instant) -> [PairingAction] {
        switch (command, pairing.step) {
        case (.pairingPublicKey(let octets), .awaitingPublicKey):
            return publicKeyReceived(octets, &pairing, now: now)
        case (.pairingRandom(let peerNonce), .awaitingRandom):
            return randomReceived(peerNonce, &pairing, now: now)
        case (.pairingDHKeyCheck(let check), .awaitingCheck) where !pairing.peerCheckVerified:
            guard let expected = pairing.expectedPeerCheck, check.equalsInConstantTime(expected) else {
                return refuse(.dhKeyCheckMismatch)
            }
            pairing.peerCheckVerified = true
            return sendCheckIfReady(&pairing, now: now)
        case (.identityInformation(let irk), .awaitingIdentityInformation):
            pairing.step = .awaitingIdentityAddress(irk: SecretKey128(irk))
            state = .pairing(pairing)
            return []
        case (.identityAddressInformation(let type, let address), .awaitingIdentityAddress(let irk)):
            // An identity address is public or static random (Vol 6 Part B §1.3).
            guard type == 0 || (type == 1 && address.randomAddressKind == .staticRandom) else {
                return refuse(.invalidParameters(.identityAddressInformation))
            }
            let hasKey = irk.revealed != .zero
            return complete(pairing, PeerIdentity(irk: hasKey ? irk : nil, address: address, isRandom: type == 1))
        case (.other(let code), _) where Self.neverTaken(code):
            return refuse(.unsupported(code))
        default:
            return refuse(.unexpected(command.code))
        }
    }

    private mutating func publicKeyReceived(_ octets: ArraySlice<UInt8>, _ pairing: inout Pairing, now: Instant) -> [PairingAction] {
        guard let peerKey = P256PublicKey(smpOctets: octets) else { return refuse(.invalidPublicKey) }
        // Its private key is published: a pairing with it protects nothing.
        guard peerKey != .smpDebugKey else { return refuse(.debugPublicKey) }
        // A peer echoing our own key would authenticate against itself.
        guard peerKey.x != pairing.keyPair.publicKey.x else { return refuse(.reflectedPublicKey) }
        guard let dhKey = pairing.keyPair.sharedSecret(with: peerKey) else { return refuse(.invalidPublicKey) }
        pairing.peerKey = peerKey
        pairing.dhKey = dhKey
        pairing.step = .awaitingRandom
        state = .pairing(pairing)
        // Cb = f4(PKbx, PKax, Nb, 0) for Just Works and Numeric Comparison.
        let ours = pairing.keyPair.publicKey
        let confirm = SecurityFunctions.f4(u: ours.x, v: peerKey.x, x: pairing.nonce, z: 0)
        return send([[SMPCode.pairingPublicKey.rawValue] + ours.smpOctets,
                     [SMPCode.pairingConfirm.rawValue] + confirm.leastSignificantFirst], now: now)
    }

    private mutating func randomReceived(_ peerNonce: Octets128, _ pairing: inout Pairing, now: Instant) -> [PairingAction] {
        guard let peerKey = pairing.peerKey, let dhKey = pairing.dhKey else { return refuse(.unexpected(.pairingRandom)) }
        let ours = pairing.keyPair.publicKey
        let (macKey, ltk) = SecurityFunctions.f5(w: dhKey, n1: peerNonce, n2: pairing.nonce, a1: initiatorAddress, a2: responderAddress)
        // ra = rb = 0 for Just Works and Numeric Comparison.
        pairing.expectedPeerCheck = SecurityFunctions.f6(w: macKey, n1: peerNonce, n2: pairing.nonce, r: .zero,
                                                         ioCap: pairing.request.ioCap, a1: initiatorAddress, a2: responderAddress)
        pairing.ourCheck = SecurityFunctions.f6(w: macKey, n1: pairing.nonce, n2: peerNonce, r: .zero,
                                                ioCap: pairing.response.ioCap, a1: responderAddress, a2: initiatorAddress)
        pairing.ltk = ltk
        pairing.step = .awaitingCheck
        state = .pairing(pairing)
        var actions = send([[SMPCode.pairingRandom.rawValue] + pairing.nonce.leastSignificantFirst], now: now)
        if pairing.method == .numericComparison {
            let value = SecurityFunctions.g2(u: peerKey.x, v: ours.x, x: peerNonce, y: pairing.nonce) % 1_000_000
            actions.append(.compareNumericValue(value))
        }
        return actions
    }

    /// Eb goes once Ea checked out and, for Numeric Comparison, the person said yes.
    mutating func sendCheckIfReady(_ pairing: inout Pairing, now: Instant) -> [PairingAction] {
        guard pairing.peerCheckVerified, pairing.method == .justWorks || pairing.valueConfirmed, let check = pairing.ourCheck else {
            state = .pairing(pairing)
            return []
        }
        pairing.step = .awaitingEncryption
        state = .pairing(pairing)
        return send([[SMPCode.pairingDHKeyCheck.rawValue] + check.leastSignificantFirst], now: now)
    }

    // MARK: Phase 3: key distribution (the responder first, §3.6.1)

    mutating func distributeKeys(_ pairing: inout Pairing, now: Instant) -> [PairingAction] {
        var pdus = [[UInt8]]()
        if pairing.response.responderKeyDistribution.contains(.identityKey) {
            let identity = configuration.localIdentity
            pdus.append([SMPCode.identityInformation.rawValue] + identity.irk.revealed.leastSignificantFirst)
            let address = identity.address
            pdus.append([SMPCode.identityAddressInformation.rawValue, address.isRandom ? 1 : 0]
                + address.mostSignificantFirst.dropFirst().reversed())
        }
        guard pairing.response.initiatorKeyDistribution.contains(.identityKey) else {
            let sent = pdus.map { PairingAction.send($0) }
            return sent + complete(pairing, nil)
        }
        pairing.step = .awaitingIdentityInformation
        state = .pairing(pairing)
        return pdus.isEmpty ? [] : send(pdus, now: now)
    }

    private mutating func complete(_ pairing: Pairing, _ identity: PeerIdentity?) -> [PairingAction] {
        guard let ltk = pairing.ltk else { return refuse(.unexpected(.identityAddressInformation)) }
        state = .paired(ltk: ltk)
        var actions = [PairingAction]()
        if nextDeadline != nil {
            nextDeadline = nil
            actions.append(.armTimer(nil))
        }
        actions.append(.paired(PairingResult(method: pairing.method, peerIdentity: identity)))
        return actions
    }
}

extension SMPCommand {
    var code: SMPCode {
        switch self {
        case .pairingRequest: .pairingRequest
        case .pairingConfirm: .pairingConfirm
        case .pairingRandom: .pairingRandom
        case .pairingFailed: .pairingFailed
        case .pairingPublicKey: .pairingPublicKey
        case .pairingDHKeyCheck: .pairingDHKeyCheck
        case .identityInformation: .identityInformation
        case .identityAddressInformation: .identityAddressInformation
        case .other(let code): code
        }
    }
}
