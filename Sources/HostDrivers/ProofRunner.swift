import EventLoop
import HCI
import Host
import PresenceProof

/// Performs proof handshakes (see docs/proof-protocol.md) over established connections: write a fresh
/// challenge, read the response, verify it in constant time, disconnect with 0x13, and
/// report a `ProofOutcome`. Several handshakes may run at once, one per connection.
///
/// Connection establishment is the caller's; so is bookkeeping (feed the outcome to a
/// `ProofBook`: cache the handles on success, count failures, lock out).
public final class ProofRunner {
    public let dataPath: DataPathDriver
    /// Called once per `start`, when the verdict is known (the Disconnect may still be on
    /// its way), with the time it was known.
    public var onFinished: (ProofOutcome, Instant) -> Void = { _, _ in }

    private struct Attempt {
        var tag: String
        var key: TagKey
        var challenge: ProofChallenge
        var startedAt: Instant
        var connect: Duration?
        var closeReason: LEDataPath.CloseReason?
    }

    private var attempts: [UInt16: Attempt] = [:]
    private var makeChallenge: () -> ProofChallenge
    /// How long the challenge may take to become a response (`ProofTimeLimit`).
    public var timeLimit = ProofTimeLimit()

    /// `makeChallenge` defaults to the operating system's CSPRNG; tests inject their own.
    public init(dataPath: DataPathDriver, makeChallenge: (() -> ProofChallenge)? = nil) {
        self.dataPath = dataPath
        self.makeChallenge = makeChallenge ?? {
            var generator = SystemRandomNumberGenerator()
            return ProofProtocol.makeChallenge(using: &generator)
        }
    }

    /// The data path closed `handle` (its `onConnectionClosed`): a handshake on it ends with
    /// this reason (a controller reset is not the tag's failure).
    public func connectionClosed(_ handle: UInt16, reason: LEDataPath.CloseReason) {
        attempts[handle]?.closeReason = reason
    }

    public var runningHandles: [UInt16] { attempts.keys.sorted() }

    /// Starts a handshake on `handle` (from LE Connection Complete). `connectDuration`
    /// is only reported in the timings.
    public func start(handle: UInt16, tag: String, key: TagKey, cachedHandles: ProofHandles?,
                      connectDuration: Duration? = nil, now: Instant) {
        let challenge = makeChallenge()
        guard attempts[handle] == nil else {
            report(Attempt(tag: tag, key: key, challenge: challenge, startedAt: now, connect: connectDuration),
                   handle: handle, failure: .protocolViolation("a handshake is already running on this connection"),
                   completion: nil, verify: .zero, now: now)
            return
        }
        var attempt = Attempt(tag: tag, key: key, challenge: challenge, startedAt: now, connect: connectDuration)
        // A controller on its way through a reset has no connections: not the tag's failure.
        if !dataPath.dataPath.isReady { attempt.closeReason = .controllerReset }
        attempts[handle] = attempt
        let request = GATTWriteReadExchange.Request(
            service: GATTUUID(bytes: ProofProtocol.serviceUUID) ?? GATTUUID(uuid16: 0),
            writeCharacteristic: GATTUUID(bytes: ProofProtocol.challengeCharacteristicUUID) ?? GATTUUID(uuid16: 0),
            readCharacteristic: GATTUUID(bytes: ProofProtocol.responseCharacteristicUUID) ?? GATTUUID(uuid16: 0),
            value: challenge.bytes,
            cachedHandles: cachedHandles.map { GATTWriteReadExchange.Handles(write: $0.challenge, read: $0.response) }
        )
        dataPath.startExchange(request, on: handle, now: now) { [unowned self] result, now in
            self.exchangeFinished(handle: handle, result: result, now: now)
        }
    }

    private func exchangeFinished(handle: UInt16,
                                  result: Result<GATTWriteReadExchange.Completion, GATTWriteReadExchange.Failure>, now: Instant) {
        guard let attempt = attempts.removeValue(forKey: handle) else { return }
        switch result {
        case .success(let completion):
            // Verification is CPU work between two inputs; its time comes from the loop's clock.
            let before = dataPath.link.loop.now
            var failure: ProofFailure?
            do {
                try ProofProtocol.verify(response: completion.value, to: attempt.challenge, key: attempt.key)
                // From the challenge's write to the response read: what a relay lengthens.
                failure = timeLimit.judge(challengeToResponse: completion.timings.write + completion.timings.read)
            } catch {
                failure = .invalidResponse(error)
            }
            let verify = dataPath.link.loop.now - before
            dataPath.disconnect(handle, reason: .remoteUserTerminated)
            report(attempt, handle: handle, failure: failure, completion: completion, verify: verify, now: now + verify)
        case .failure(let error):
            let failure = Self.proofFailure(error, closeReason: attempt.closeReason)
            // A dead bearer was already disconnected by the data path; a gone link needs nothing.
            let alreadyHandled: Bool = if case .gatt(let gattError) = error { gattError.closesBearer } else { false }
            if attempt.closeReason == nil, !alreadyHandled { dataPath.disconnect(handle, reason: .remoteUserTerminated) }
            report(attempt, handle: handle, failure: failure, completion: nil, verify: .zero, now: now)
        }
    }

    private func report(_ attempt: Attempt, handle: UInt16, failure: ProofFailure?,
                        completion: GATTWriteReadExchange.Completion?, verify: Duration, now: Instant) {
        var timings = ProofOutcome.Timings(connect: attempt.connect)
        if let completion {
            timings.discovery = completion.timings.discovery
            timings.write = completion.timings.write
            timings.read = completion.timings.read
        }
        timings.verify = verify
        let elapsed = now - attempt.startedAt
        let milliseconds = Int(clamping: elapsed.nanosecondsClamped / 1_000_000)
        onFinished(ProofOutcome(
            tagId: attempt.tag, connectionHandle: handle, failure: failure, roundTripMilliseconds: max(0, milliseconds),
            timings: timings, attRoundTrips: completion?.attRequests ?? 0,
            // Only a valid proof vouches for the handles (the cache is dropped on any failure).
            handles: failure == nil ? completion.map { ProofHandles(challenge: $0.handles.write, response: $0.handles.read) } : nil,
            usedCachedHandles: completion?.usedCache ?? false
        ), now)
    }

    static func proofFailure(_ failure: GATTWriteReadExchange.Failure, closeReason: LEDataPath.CloseReason?) -> ProofFailure {
        switch failure {
        case .serviceMissing: return .serviceMissing
        case .characteristicMissing: return .characteristicMissing
        case .gatt(let error):
            switch error {
            case .attError(let request, _, let code): return .attError(opcode: request.rawValue, code: code.rawValue)
            case .protocolViolation(let violation): return .protocolViolation(violation.description)
            case .timeout: return .timeout
            case .linkClosed:
                switch closeReason {
                case .controllerReset?: return .controllerReset
                case .disconnected(let reason)?: return .disconnected(reason: reason.rawValue)
                case nil: return .disconnected(reason: HCIStatus.unknownConnection.rawValue)
                }
            case .bearerClosed: return .protocolViolation("ATT bearer already closed on this connection")
            case .busy: return .protocolViolation("a GATT procedure is already running on this connection")
            }
        }
    }
}
