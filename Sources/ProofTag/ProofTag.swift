import EventLoop
import Host
import PresenceProof

/// The tag side of the proof protocol (docs/proof-protocol.md, SPEC §16), sans-IO: a
/// GATT server holding GAP, GATT and the Presence Proof service, one per connection.
/// A challenge written to Challenge is checked (17 bytes, else Invalid Attribute Value
/// Length; version 0x01, else Value Not Allowed) and answered at once: Response then
/// reads `0x01 ‖ first16(HMAC-SHA256(K_tag, "BGWv1" ‖ nonce))`, before the Write
/// Response leaves. Response refuses reads (Unlikely Error) until a valid challenge came,
/// and again after a refused one, so a stale answer is never read.
public struct ProofTag: Sendable {
    public enum Action: Hashable, Sendable {
        /// The server's action for the link (send, close, and what else it reports).
        case server(GATTServer.Action)
        /// A challenge was answered (for the log; never the key).
        case challengeAnswered
        /// A challenge was refused with this ATT error.
        case challengeRefused(ATTErrorCode)
    }

    /// Appearance 0x0200, Generic Tag.
    public static let appearance: UInt16 = 0x0200

    public private(set) var server: GATTServer
    public let challengeHandle: UInt16
    public let responseHandle: UInt16
    private let key: TagKey

    /// `name` is the GAP Device Name (the tag id, cut to GAP's limit).
    public init(name: String, key: TagKey, configuration: GATTServer.Configuration = .init()) throws(GATTDatabaseError) {
        let database = try Self.database(name: name)
        server = GATTServer(database: database, configuration: configuration)
        // The service above holds both characteristics.
        challengeHandle = database.valueHandle(service: .presenceProofService, characteristic: .proofChallenge) ?? 0
        responseHandle = database.valueHandle(service: .presenceProofService, characteristic: .proofResponse) ?? 0
        self.key = key
    }

    /// GAP (`name`, Generic Tag), GATT and the Presence Proof service.
    public static func database(name: String) throws(GATTDatabaseError) -> GATTDatabase {
        try GATTDatabase(services: [
            .genericAccess(deviceName: name, appearance: appearance),
            .genericAttribute(),
            .presenceProof,
        ])
    }

    public var nextDeadline: Instant? { server.nextDeadline }

    /// An ATT PDU from the central.
    public mutating func receive(_ pdu: [UInt8], security: ATTLinkSecurity, now: Instant) -> [Action] {
        var actions = [Action]()
        for action in server.receive(pdu, security: security, now: now) {
            guard case .writeRequested(let handle, let value) = action else {
                actions.append(.server(action))
                continue
            }
            let refusal = handle == challengeHandle ? answer(value) : .writeNotPermitted
            actions.append(refusal.map { .challengeRefused($0) } ?? .challengeAnswered)
            actions.append(contentsOf: server.completeWrite(error: refusal).map { .server($0) })
        }
        return actions
    }

    public mutating func timerFired(now: Instant) -> [Action] {
        server.timerFired(now: now).map { .server($0) }
    }

    public mutating func linkClosed() { server.linkClosed() }

    /// Sets Response for a written challenge; the error that refuses it otherwise.
    private mutating func answer(_ value: [UInt8]) -> ATTErrorCode? {
        let (refusal, response) = Self.answer(challenge: value, key: key)
        // Response is this server's own variable value of exactly the answer's length.
        try? server.setValue(response, at: responseHandle)
        return refusal
    }

    /// What a written Challenge `value` makes of Response, and the error that refuses
    /// the write (nil: accepted). For a tag that drives its own server (`beacon-gateway tag`).
    public static func answer(challenge value: [UInt8], key: TagKey) -> (refusal: ATTErrorCode?, response: GATTStoredValue) {
        let refusal: ATTErrorCode? = if value.count != ProofProtocol.challengeLength {
            .invalidAttributeValueLength
        } else if value.first != ProofProtocol.version {
            .valueNotAllowed
        } else {
            nil
        }
        let response: GATTStoredValue = if refusal == nil, let challenge = ProofChallenge(nonce: Array(value.dropFirst())) {
            .bytes(ProofProtocol.expectedResponse(to: challenge, key: key))
        } else {
            .unavailable(.unlikelyError)
        }
        return (refusal, response)
    }
}
