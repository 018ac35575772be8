import EventLoop
import HCI

/// The client side of one ATT bearer (Core Vol 3 Part F §3.3), sans-IO.
///
/// One request outstanding at a time; each must be answered within the operation
/// timeout, never more than ATT's 30 s transaction limit, after which the bearer is dead
/// (§3.3.3: no further PDUs) and the link must be disconnected. A response of the
/// wrong opcode, an oversized or truncated PDU closes the bearer the same way. The
/// peer's own traffic is tolerated: notifications are ignored, indications confirmed,
/// an Exchange MTU Request answered with 23 and other requests refused with an Error
/// Response, as the door serves no attributes on the connections it makes (`GATTServer`
/// serves those a central makes to us). Nothing here grows with the input.
public struct ATTBearer: Sendable {
    public struct Configuration: Hashable, Sendable {
        /// ATT_MTU; the proof protocol fits the default 23, so it is never exchanged.
        public var mtu: Int
        /// How long one request may go unanswered (capped at `transactionTimeout`).
        public var operationTimeout: Duration
        /// ATT's transaction timeout.
        public var transactionTimeout: Duration

        public init(mtu: Int = 23, operationTimeout: Duration = .seconds(5), transactionTimeout: Duration = .seconds(30)) {
            self.mtu = max(23, mtu)
            self.operationTimeout = operationTimeout
            self.transactionTimeout = transactionTimeout
        }
    }

    public enum Action: Hashable, Sendable {
        /// An ATT PDU for the peer.
        case send([UInt8])
        /// The answer to the outstanding request: its opcode and parameters.
        case response(ATTOpcode, [UInt8])
        /// The outstanding request got an Error Response (the bearer stays usable).
        case errorResponse(request: ATTOpcode, handle: UInt16, code: ATTErrorCode)
        /// The bearer is closed for this reason: disconnect the link.
        case closed(GATTError)
    }

    public struct Counters: Hashable, Sendable {
        public var requestsSent = 0
        public var notificationsIgnored = 0
        public var indicationsConfirmed = 0
        public var peerRequestsAnswered = 0
        public var unsolicitedResponses = 0
        public var malformedPDUs = 0
        public var droppedAfterClose = 0
        public init() {}
    }

    private struct Outstanding: Sendable {
        var opcode: ATTOpcode
        var deadline: Instant
    }

    private enum State: Sendable {
        case open(Outstanding?)
        case closed(GATTError)
    }

    public let configuration: Configuration
    public private(set) var counters = Counters()
    private var state: State = .open(nil)

    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    public var isClosed: Bool {
        if case .closed = state { return true }
        return false
    }

    public var hasOutstandingRequest: Bool {
        if case .open(let outstanding?) = state { _ = outstanding; return true }
        return false
    }

    public var nextDeadline: Instant? {
        if case .open(let outstanding?) = state { return outstanding.deadline }
        return nil
    }

    // MARK: Inputs

    /// Sends a request; throws when one is outstanding or the bearer is closed.
    public mutating func request(_ pdu: [UInt8], now: Instant) throws(GATTError) -> [Action] {
        switch state {
        case .closed: throw .bearerClosed
        case .open(.some): throw .busy
        case .open(nil): break
        }
        guard let first = pdu.first, pdu.count <= configuration.mtu else {
            // Our own encoding: a bug, but never worth a trap.
            throw .protocolViolation(.oversized(pdu.count))
        }
        let timeout = min(configuration.operationTimeout, configuration.transactionTimeout)
        state = .open(Outstanding(opcode: ATTOpcode(rawValue: first), deadline: now + timeout))
        counters.requestsSent += 1
        return [.send(pdu)]
    }

    /// A PDU from the peer.
    public mutating func receive(_ pdu: [UInt8], now: Instant) -> [Action] {
        guard case .open(let outstanding) = state else {
            counters.droppedAfterClose += 1
            return []
        }
        guard let first = pdu.first else {
            counters.malformedPDUs += 1
            return []
        }
        guard pdu.count <= configuration.mtu else { return close(.protocolViolation(.oversized(pdu.count))) }
        let opcode = ATTOpcode(rawValue: first)
        if opcode == .errorResponse {
            guard let outstanding else {
                counters.unsolicitedResponses += 1
                return []
            }
            var reader = HCIByteReader(pdu[1...], context: .aboveHCI)
            guard pdu.count == 5, let request = try? reader.u8(), let handle = try? reader.u16(), let code = try? reader.u8() else {
                return close(.protocolViolation(.malformed(.errorResponse)))
            }
            guard request == outstanding.opcode.rawValue else {
                return close(.protocolViolation(.mismatchedErrorResponse(ATTOpcode(rawValue: request))))
            }
            state = .open(nil)
            return [.errorResponse(request: outstanding.opcode, handle: handle, code: ATTErrorCode(rawValue: code))]
        }
        if opcode.isResponse {
            guard let outstanding else {
                counters.unsolicitedResponses += 1
                return []
            }
            guard opcode == outstanding.opcode.expectedResponse else {
                return close(.protocolViolation(.wrongOpcode(expected: outstanding.opcode.expectedResponse, actual: opcode)))
            }
            state = .open(nil)
            return [.response(opcode, Array(pdu[1...]))]
        }
        return peerInitiated(opcode, pdu)
    }

    /// Call at `nextDeadline`: an unanswered request kills the bearer.
    public mutating func timerFired(now: Instant) -> [Action] {
        guard case .open(let outstanding?) = state, outstanding.deadline <= now else { return [] }
        return close(.timeout)
    }

    /// The link is gone: an outstanding request fails.
    public mutating func linkClosed() -> [Action] {
        guard case .open(let outstanding) = state else { return [] }
        state = .closed(.linkClosed)
        return outstanding == nil ? [] : [.closed(.linkClosed)]
    }

    /// Closes the bearer because a layer above found the peer's answer unacceptable.
    public mutating func shutDown(_ error: GATTError) {
        if case .open = state { state = .closed(error) }
    }

    private mutating func close(_ error: GATTError) -> [Action] {
        state = .closed(error)
        return [.closed(error)]
    }

    // MARK: The peer as client

    private mutating func peerInitiated(_ opcode: ATTOpcode, _ pdu: [UInt8]) -> [Action] {
        switch opcode {
        case .handleValueNotification, .multipleHandleValueNotification:
            counters.notificationsIgnored += 1
            return []
        case .handleValueIndication:
            guard pdu.count >= 3 else {
                counters.malformedPDUs += 1
                return []
            }
            counters.indicationsConfirmed += 1
            return [.send([ATTOpcode.handleValueConfirmation.rawValue])]
        case .handleValueConfirmation:
            // We never indicate; nothing to confirm.
            counters.unsolicitedResponses += 1
            return []
        case .exchangeMTURequest:
            counters.peerRequestsAnswered += 1
            guard pdu.count == 3 else { return [errorResponse(opcode, handle: 0, .invalidPDU)] }
            var answer = [ATTOpcode.exchangeMTUResponse.rawValue]
            answer.appendLE(UInt16(truncatingIfNeeded: configuration.mtu))
            return [.send(answer)]
        default:
            guard !opcode.isCommand else {
                counters.malformedPDUs += 1
                return []
            }
            counters.peerRequestsAnswered += 1
            var reader = HCIByteReader(pdu[1...], context: .aboveHCI)
            let handle = (try? reader.u16()) ?? 0
            // Our attribute database is empty: searches find nothing, handles are invalid.
            let code: ATTErrorCode = switch opcode {
            case .findInformationRequest, .findByTypeValueRequest, .readByTypeRequest, .readByGroupTypeRequest: .attributeNotFound
            case .readRequest, .readBlobRequest, .writeRequest, .prepareWriteRequest: .invalidHandle
            default: .requestNotSupported
            }
            return [errorResponse(opcode, handle: code == .requestNotSupported ? 0 : handle, code)]
        }
    }

    private func errorResponse(_ request: ATTOpcode, handle: UInt16, _ code: ATTErrorCode) -> Action {
        .send(ATTErrorResponse.pdu(answering: request, handle: handle, code: code))
    }
}
