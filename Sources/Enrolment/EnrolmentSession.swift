import BluetoothCrypto
import EventLoop
import HCI
import Host
import SecurityManager

/// One enrolment window (SPEC §15), sans-IO: advertise connectable, take one phone's
/// connection as peripheral, ask it to pair (Security Request), run the pairing through
/// a `PairingResponder`, and end at the first completed pairing, a failed one, or the
/// window's end. Inputs are the peripheral connection's events as the data path hands
/// them up, the person's answer to a Numeric Comparison and the time; outputs are
/// `EnrolmentAction`s the driver performs in order (docs/pairing.md).
///
/// One phone at a time: a second central connecting while one is there is disconnected.
/// What an outside device can do does not end the window: a phone that leaves, a central
/// that sends no Pairing Request within `pairingStartTimeout` (disconnected), a pairing
/// refused or failed (the phone disconnected, the installer told why) all free it, and
/// advertising resumes once the link is down. The window ends at a completed pairing, the
/// installer's "no" to the six digits, its time, or `end` (its client gone, at any moment,
/// also before it started).
public struct EnrolmentSession: Sendable {
    public struct Configuration: Sendable {
        public var window: Duration
        /// What the installer asked for: every pairing in the window uses it, or is refused.
        public var method: PairingMethod
        public var localIdentity: PairingResponder.LocalIdentity
        public var advertisement: EnrolmentAdvertisement
        public var smpTimeout: Duration
        /// How long a central may stay connected without sending a Pairing Request before
        /// it is disconnected and the window goes on (docs/pairing.md, "Enrolment's window").
        public var pairingStartTimeout: Duration

        public init(window: Duration = .seconds(120), method: PairingMethod,
                    localIdentity: PairingResponder.LocalIdentity, advertisement: EnrolmentAdvertisement,
                    smpTimeout: Duration = .seconds(30), pairingStartTimeout: Duration = .seconds(10)) {
            self.window = window
            self.method = method
            self.localIdentity = localIdentity
            self.advertisement = advertisement
            self.smpTimeout = smpTimeout
            self.pairingStartTimeout = pairingStartTimeout
        }
    }

    /// The central on the window's one link.
    struct Phone: Sendable {
        let handle: UInt16
        /// The address it connected from, as on air: what its identity must be tied to.
        let peer: AddressWithType
        var responder: PairingResponder
        /// Until when it may take to send its Pairing Request; nil once it did, or once it
        /// is being let go.
        var pairingStartDeadline: Instant?
        /// We asked for the link to close (turned away): advertising resumes when it has.
        var isLeaving = false
    }

    enum State: Sendable {
        case idle
        case advertising
        case connected(Phone)
        case finished
    }

    public let configuration: Configuration
    let secrets: @Sendable () -> any PairingSecrets
    var state: State = .idle
    var windowEnds: Instant?
    /// How the last phone turned away failed: what the window's end reports.
    var lastFailure: TurnedAway?
    /// What a completed pairing's identity is checked against (`IdentityCheck`): the driver
    /// sets it as a phone connects, from what is in force then.
    public var identityCheck = IdentityCheck()

    public init(configuration: Configuration, secrets: @escaping @Sendable () -> any PairingSecrets = { SystemPairingSecrets() }) {
        self.configuration = configuration
        self.secrets = secrets
    }

    public var isFinished: Bool {
        if case .finished = state { return true }
        return false
    }

    public var nextDeadline: Instant? {
        guard let windowEnds else { return nil }
        guard case .connected(let phone) = state else { return windowEnds }
        return [phone.responder.nextDeadline, phone.pairingStartDeadline].compactMap { $0 }.reduce(windowEnds, min)
    }

    // MARK: Inputs

    /// Opens the window: pairing delegated, advertising on, the window's timer running.
    public mutating func start(now: Instant) -> [EnrolmentAction] {
        guard case .idle = state else { return [] }
        state = .advertising
        windowEnds = now + configuration.window
        return [.delegatePairing(true), .startAdvertising(configuration.advertisement)]
    }

    /// LE Connection Complete in the peripheral role. The phone connected to the address
    /// the window advertises from, our identity address: f5 and f6 take it as ours.
    public mutating func peripheralConnected(_ complete: LEConnectionComplete, now: Instant) -> [EnrolmentAction] {
        switch state {
        case .advertising:
            var responder = PairingResponder(
                configuration: .init(acceptsPairing: true, method: configuration.method,
                                     localIdentity: configuration.localIdentity, timeout: configuration.smpTimeout),
                initiatorAddress: Self.overTheAir(complete), responderAddress: configuration.localIdentity.address,
                secrets: secrets())
            let handle = complete.connectionHandle
            let request = responder.requestSecurity(now: now)
            state = .connected(Phone(handle: handle, peer: Self.overTheAir(complete), responder: responder,
                                     pairingStartDeadline: now + configuration.pairingStartTimeout))
            return [.connected(handle: handle, peer: Self.overTheAir(complete))] + perform(request, handle: handle, now: now)
        case .connected, .idle, .finished:
            return [.disconnect(complete.connectionHandle)]
        }
    }

    /// An SMP PDU from the phone.
    public mutating func securityManagerPDU(_ pdu: [UInt8], handle: UInt16, now: Instant) -> [EnrolmentAction] {
        withResponder(handle, now: now) { $0.receive(pdu, now: now) }
    }

    /// LE Long Term Key Request: answered from this connection's pairing, refused otherwise.
    public mutating func longTermKeyRequested(_ request: LELongTermKeyRequest, now: Instant) -> [EnrolmentAction] {
        guard case .connected(let phone) = state, phone.handle == request.connectionHandle else {
            return [.rejectLongTermKeyRequest(request.connectionHandle)]
        }
        return withResponder(phone.handle, now: now) {
            $0.longTermKeyRequested(random: request.randomNumber, encryptedDiversifier: request.encryptedDiversifier, now: now)
        }
    }

    public mutating func encryptionChanged(handle: UInt16, status: HCIStatus, enabled: Bool, now: Instant) -> [EnrolmentAction] {
        withResponder(handle, now: now) { $0.encryptionChanged(status: status, enabled: enabled, now: now) }
    }

    /// The person's answer to `.compareNumericValue`.
    public mutating func numericComparisonAnswered(matches: Bool, now: Instant) -> [EnrolmentAction] {
        guard case .connected(let phone) = state else { return [] }
        return withResponder(phone.handle, now: now) { $0.numericComparisonAnswered(matches: matches, now: now) }
    }

    /// The connection ended (Disconnection Complete or a controller reset): a pairing in
    /// progress failed, and the window is free again.
    public mutating func connectionClosed(handle: UInt16, now: Instant) -> [EnrolmentAction] {
        guard case .connected(var phone) = state, phone.handle == handle else { return [] }
        let actions = phone.responder.linkClosed()
        state = .advertising
        let told = perform(actions, handle: handle, now: now)
        return isFinished ? told : told + [.startAdvertising(configuration.advertisement)]
    }

    /// Ends the window before its time (the installer left, the controller was reset, the
    /// agent stops): advertising off and the phone's link dropped, as at any end. Before
    /// `start` it ends the window too: a window whose client is already gone never opens.
    public mutating func end(_ reason: String, now: Instant) -> [EnrolmentAction] {
        guard !isFinished else { return [] }
        return finish(.ended(reason))
    }

    public mutating func timerFired(now: Instant) -> [EnrolmentAction] {
        guard let windowEnds, !isFinished else { return [] }
        if windowEnds <= now {
            return finish(.windowEnded(lastFailure: lastFailure))
        }
        guard case .connected(var phone) = state else { return [] }
        if let deadline = phone.pairingStartDeadline, deadline <= now {
            phone.pairingStartDeadline = nil
            phone.isLeaving = true
            state = .connected(phone)
            return [.turnedAway(.noPairingRequest(configuration.pairingStartTimeout)), .disconnect(phone.handle)]
        }
        return withResponder(phone.handle, now: now) { $0.timerFired(now: now) }
    }

    // MARK: Steps

    private mutating func withResponder(_ handle: UInt16, now: Instant,
                                        _ step: (inout PairingResponder) -> [PairingAction]) -> [EnrolmentAction] {
        guard case .connected(var phone) = state, phone.handle == handle else { return [] }
        let actions = step(&phone.responder)
        if phone.responder.isPairing { phone.pairingStartDeadline = nil }
        state = .connected(phone)
        return perform(actions, handle: handle, now: now)
    }

    private mutating func perform(_ actions: [PairingAction], handle: UInt16, now: Instant) -> [EnrolmentAction] {
        var out = [EnrolmentAction]()
        for action in actions {
            switch action {
            case .send(let pdu):
                out.append(.sendSecurityManager(handle: handle, pdu: pdu))
            case .replyLongTermKey(let key):
                if let octets = LongTermKeyOctets(leastSignificantFirst: key.revealed.leastSignificantFirst) {
                    out.append(.replyLongTermKey(handle: handle, octets))
                }
            case .rejectLongTermKeyRequest:
                out.append(.rejectLongTermKeyRequest(handle))
            case .compareNumericValue(let value):
                out.append(.compareNumericValue(value))
            case .armTimer:
                // `nextDeadline` already includes the responder's.
                break
            case .paired(let result):
                if let identity = result.peerIdentity, case .connected(let phone) = state,
                   let refusal = identityCheck.refusal(of: identity, connectedFrom: phone.peer) {
                    // Paired, but what it gave is not its own, or is someone else's.
                    out.append(contentsOf: turnAway(.identityRefused(refusal)))
                    continue
                }
                let outcome: EnrolmentOutcome = if let identity = result.peerIdentity {
                    .enrolled(method: result.method, identity: identity)
                } else {
                    .pairedWithoutIdentity(result.method)
                }
                out.append(contentsOf: finish(outcome))
            case .failed(.refused(.numericValueRejected)):
                // The installer's no: the window ends with it.
                out.append(contentsOf: finish(.failed(.refused(.numericValueRejected))))
            case .failed(let failure):
                out.append(contentsOf: turnAway(.pairingFailed(failure)))
            }
        }
        return out
    }

    /// A pairing refused or failed, or an identity refused: the installer is told, the
    /// phone let go (after what the responder last sent), and the window goes on.
    private mutating func turnAway(_ failure: TurnedAway) -> [EnrolmentAction] {
        lastFailure = failure
        var actions: [EnrolmentAction] = [.turnedAway(failure)]
        if case .connected(var phone) = state, !phone.isLeaving {
            phone.pairingStartDeadline = nil
            phone.isLeaving = true
            state = .connected(phone)
            actions.append(.disconnect(phone.handle))
        }
        return actions
    }

    /// Ends the window: advertising off, pairing no longer delegated, the phone's link
    /// dropped (after what the responder last sent), the outcome reported.
    private mutating func finish(_ outcome: EnrolmentOutcome) -> [EnrolmentAction] {
        var actions: [EnrolmentAction] = []
        switch state {
        case .idle: break
        case .advertising: actions += [.delegatePairing(false), .stopAdvertising]
        case .connected(let phone):
            actions.append(.delegatePairing(false))
            if !phone.isLeaving { actions.append(.disconnect(phone.handle)) }
        case .finished: return []
        }
        state = .finished
        windowEnds = nil
        actions.append(.finished(outcome))
        return actions
    }

    /// The address the phone used on air: its resolvable private address when the
    /// controller resolved it to an identity, the address it connected from otherwise.
    static func overTheAir(_ complete: LEConnectionComplete) -> AddressWithType {
        let resolved = complete.peerAddressType.rawValue >= 0x02
        if resolved, complete.peerResolvablePrivateAddress.rawValue != 0 {
            return AddressWithType(complete.peerResolvablePrivateAddress, isRandom: true)
        }
        return AddressWithType(complete.peerAddress, isRandom: complete.peerAddressType.rawValue & 0x01 != 0)
    }
}

/// What the driver does for an enrolment, in order.
public enum EnrolmentAction: Hashable, Sendable {
    /// Peripheral connections opened from now on hand their pairing up (or no longer).
    case delegatePairing(Bool)
    case startAdvertising(EnrolmentAdvertisement)
    case stopAdvertising
    /// A phone connected; the address it used.
    case connected(handle: UInt16, peer: AddressWithType)
    case sendSecurityManager(handle: UInt16, pdu: [UInt8])
    case replyLongTermKey(handle: UInt16, LongTermKeyOctets)
    case rejectLongTermKeyRequest(UInt16)
    /// Show these six digits and report the person's yes or no.
    case compareNumericValue(UInt32)
    /// A central let go while the window goes on: tell the installer why.
    case turnedAway(TurnedAway)
    case disconnect(UInt16)
    case finished(EnrolmentOutcome)
}
