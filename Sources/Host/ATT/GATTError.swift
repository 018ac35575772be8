/// Why a GATT operation failed. Error Responses leave the bearer usable; everything
/// else here has closed it (and the link must be disconnected).
public enum GATTError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The peer answered with an ATT Error Response.
    case attError(request: ATTOpcode, handle: UInt16, code: ATTErrorCode)
    /// The peer broke the protocol; the bearer is closed.
    case protocolViolation(ATTProtocolViolation)
    /// No response within the operation timeout (at most ATT's 30 s); the bearer is closed.
    case timeout
    /// The link went away (disconnection or controller reset).
    case linkClosed
    /// The bearer was already closed by an earlier failure.
    case bearerClosed
    /// A procedure is already running on this bearer (one request outstanding at a time).
    case busy

    /// Whether the bearer is dead after this error: then the link must be disconnected.
    public var closesBearer: Bool {
        switch self {
        case .attError, .busy: false
        default: true
        }
    }

    public var description: String {
        switch self {
        case .attError(let request, let handle, let code):
            "ATT error \(code) to \(request) on handle 0x" + String(handle, radix: 16)
        case .protocolViolation(let violation): "protocol violation: \(violation)"
        case .timeout: "ATT transaction timed out"
        case .linkClosed: "link closed"
        case .bearerClosed: "ATT bearer closed"
        case .busy: "a GATT procedure is already running"
        }
    }
}

/// The ways a peer's ATT traffic can be unacceptable.
public enum ATTProtocolViolation: Hashable, Sendable, CustomStringConvertible {
    /// A response of another opcode than the outstanding request expects.
    case wrongOpcode(expected: ATTOpcode, actual: ATTOpcode)
    /// An Error Response naming another request than the outstanding one.
    case mismatchedErrorResponse(ATTOpcode)
    /// A PDU larger than the MTU.
    case oversized(Int)
    /// A PDU too short or with inconsistent lengths.
    case malformed(ATTOpcode)
    /// Discovery results outside the range asked for, or not increasing.
    case outOfOrder(ATTOpcode)
    /// Discovery that would not end within the request limit.
    case endlessResponses(requests: Int)

    public var description: String {
        switch self {
        case .wrongOpcode(let expected, let actual): "response \(actual), expected \(expected)"
        case .mismatchedErrorResponse(let opcode): "error response for \(opcode), which is not outstanding"
        case .oversized(let count): "PDU of \(count) bytes exceeds the MTU"
        case .malformed(let opcode): "malformed \(opcode)"
        case .outOfOrder(let opcode): "\(opcode) results out of range or order"
        case .endlessResponses(let requests): "discovery still going after \(requests) requests"
        }
    }
}
