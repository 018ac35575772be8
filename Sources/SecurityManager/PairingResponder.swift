import BluetoothCrypto
import EventLoop
import HCI

/// The responder (peripheral) side of SMP on one LE connection, sans-IO: LE Secure
/// Connections pairing with Just Works or Numeric Comparison, then key distribution of
/// identity keys in both directions (Core Vol 3 Part H; what it accepts and refuses:
/// docs/pairing.md).
///
/// Inputs are the SMP PDUs received on L2CAP channel 0x0006, the controller events of
/// this connection that concern it (LE Long Term Key Request, Encryption Change), the
/// person's answer to a Numeric Comparison, the link's end and the time; the outputs are
/// `PairingAction`s the driver performs in order. One pairing per link: after it ends
/// (paired, refused, failed) a new Pairing Request gets Repeated Attempts, and after the
/// SMP timeout nothing more goes over SMP at all. Nothing here grows with the input.
public struct PairingResponder: Sendable {
    public struct Configuration: Sendable {
        /// False: every Pairing Request gets Pairing Failed "pairing not supported".
        public var acceptsPairing: Bool
        /// The association model every pairing must use: Numeric Comparison when someone
        /// compares six digits (a phone that cannot do it is refused, never paired by Just
        /// Works instead), Just Works only when that was asked for (docs/pairing.md).
        public var method: PairingMethod
        /// The identity key we distribute (iOS hands over its own only then).
        public var localIdentity: LocalIdentity
        /// The SMP timer (§3.4).
        public var timeout: Duration

        public init(acceptsPairing: Bool, method: PairingMethod, localIdentity: LocalIdentity,
                    timeout: Duration = .seconds(30)) {
            self.acceptsPairing = acceptsPairing
            self.method = method
            self.localIdentity = localIdentity
            self.timeout = timeout
        }
    }

    /// Our IRK and identity address (public, or static random).
    public struct LocalIdentity: Sendable {
        public var irk: SecretKey128
        public var address: AddressWithType

        public init(irk: SecretKey128, address: AddressWithType) {
            self.irk = irk
            self.address = address
        }
    }

    public struct Counters: Hashable, Sendable {
        /// PDUs after the pairing ended, or Pairing Failed while idle: not answered.
        public var ignored = 0
        /// Pairing Failed we sent.
        public var refusals = 0
        public init() {}
    }

    enum State: Sendable {
        case idle
        case pairing(Pairing)
        /// The LTK still answers the controller's requests on this link.
        case paired(ltk: SecretKey128)
        case ended
        /// The SMP timer ran out (no SMP at all any more on this link, §3.4) or the link
        /// closed.
        case silent
    }

    public let configuration: Configuration
    public internal(set) var counters = Counters()
    /// When `timerFired(now:)` is due; nil while no pairing runs.
    public internal(set) var nextDeadline: Instant?
    var state: State = .idle
    var secrets: any PairingSecrets
    /// The addresses of this connection (A and B of f5 and f6).
    let initiatorAddress: AddressWithType
    let responderAddress: AddressWithType

    public init(configuration: Configuration, initiatorAddress: AddressWithType, responderAddress: AddressWithType,
                secrets: any PairingSecrets = SystemPairingSecrets()) {
        self.configuration = configuration
        self.initiatorAddress = initiatorAddress
        self.responderAddress = responderAddress
        self.secrets = secrets
    }

    /// True from the Pairing Request until the pairing ends.
    public var isPairing: Bool {
        if case .pairing = state { return true }
        return false
    }

    // MARK: Inputs

    /// An SMP PDU from the peer (the L2CAP channel 0x0006 payload).
    public mutating func receive(_ pdu: [UInt8], now: Instant) -> [PairingAction] {
        switch state {
        case .silent:
            counters.ignored += 1
            return []
        case .paired, .ended:
            // Only a new Pairing Request is answered: one pairing per link.
            guard case .success(.pairingRequest) = SMPCommand.parse(pdu) else {
                counters.ignored += 1
                return []
            }
            counters.refusals += 1
            return [.send(Self.pairingFailed(.repeatedAttempts))]
        case .idle:
            return idle(SMPCommand.parse(pdu), now: now)
        case .pairing(var pairing):
            switch SMPCommand.parse(pdu) {
            case .failure(let malformed): return refuse(Self.refusal(malformed))
            case .success(.pairingFailed(let reason)): return end(.peerFailed(reason))
            case .success(let command): return step(command, in: &pairing, now: now)
            }
        }
    }

    /// The person's answer to `compareNumericValue`.
    public mutating func numericComparisonAnswered(matches: Bool, now: Instant) -> [PairingAction] {
        guard case .pairing(var pairing) = state, pairing.step == .awaitingCheck, pairing.method == .numericComparison,
              pairing.valueConfirmed == false else { return [] }
        guard matches else { return refuse(.numericValueRejected) }
        pairing.valueConfirmed = true
        return sendCheckIfReady(&pairing, now: now)
    }

    /// HCI LE Long Term Key Request for this connection. Only the LTK of a Secure
    /// Connections pairing on this link is ever given, and only for EDIV = 0, Rand = 0.
    public mutating func longTermKeyRequested(random: UInt64, encryptedDiversifier: UInt16, now: Instant) -> [PairingAction] {
        guard random == 0, encryptedDiversifier == 0 else { return [.rejectLongTermKeyRequest] }
        switch state {
        case .pairing(let pairing):
            guard let ltk = pairing.ltk, pairing.step.isAfterChecks else { return [.rejectLongTermKeyRequest] }
            return [.replyLongTermKey(ltk)]
        case .paired(let ltk):
            return [.replyLongTermKey(ltk)]
        case .idle, .ended, .silent:
            return [.rejectLongTermKeyRequest]
        }
    }

    /// HCI Encryption Change for this connection.
    public mutating func encryptionChanged(status: HCIStatus, enabled: Bool, now: Instant) -> [PairingAction] {
        guard case .pairing(var pairing) = state, pairing.step == .awaitingEncryption else { return [] }
        guard status.isSuccess, enabled else { return end(.encryptionFailed(status, enabled: enabled)) }
        return distributeKeys(&pairing, now: now)
    }

    /// Asks the central to pair (Security Request), when nothing has started yet.
    public mutating func requestSecurity(now: Instant) -> [PairingAction] {
        guard case .idle = state, configuration.acceptsPairing else { return [] }
        var requirements: AuthenticationRequirements = [.bonding, .secureConnections]
        if configuration.method == .numericComparison { requirements.insert(.mitm) }
        return [.send([SMPCode.securityRequest.rawValue, requirements.rawValue])]
    }

    /// Call at `nextDeadline`.
    public mutating func timerFired(now: Instant) -> [PairingAction] {
        guard case .pairing = state, let deadline = nextDeadline, deadline <= now else { return [] }
        state = .silent
        nextDeadline = nil
        return [.armTimer(nil), .failed(.timedOut)]
    }

    /// Disconnection: a pairing in progress fails, and nothing is answered any more.
    public mutating func linkClosed() -> [PairingAction] {
        defer { state = .silent }
        guard case .pairing = state else { return [] }
        return end(.linkClosed)
    }

    // MARK: Shared steps

    static func pairingFailed(_ reason: PairingFailedReason) -> [UInt8] { [SMPCode.pairingFailed.rawValue, reason.rawValue] }

    static func refusal(_ malformed: SMPCommand.Malformed) -> PairingRefusal {
        switch malformed {
        case .empty: .invalidParameters(nil)
        case .reservedCode(let code): .unsupported(code)
        case .wrongLength(let code): .invalidParameters(code)
        }
    }

    /// Sends Pairing Failed and ends the pairing.
    mutating func refuse(_ refusal: PairingRefusal) -> [PairingAction] {
        counters.refusals += 1
        return [.send(Self.pairingFailed(refusal.reason))] + end(.refused(refusal))
    }

    mutating func end(_ failure: PairingFailure) -> [PairingAction] {
        state = .ended
        var actions = [PairingAction]()
        if nextDeadline != nil {
            nextDeadline = nil
            actions.append(.armTimer(nil))
        }
        actions.append(.failed(failure))
        return actions
    }

    /// Sends `pdus`, restarting the SMP timer (§3.4: it restarts whenever a command is
    /// queued for transmission).
    mutating func send(_ pdus: [[UInt8]], now: Instant) -> [PairingAction] {
        nextDeadline = now + configuration.timeout
        return pdus.map { .send($0) } + [.armTimer(nextDeadline)]
    }
}
