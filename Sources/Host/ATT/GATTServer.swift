import EventLoop
import HCI

/// The server side of one ATT bearer (Core Vol 3 Part F and Part G), sans-IO: one per
/// connection, over a `GATTDatabase`. Feed it the peer's ATT PDUs with the link's
/// security and `now`; perform the actions in order. See docs/gatt-server.md.
///
/// Every request gets exactly one answer, a response or an Error Response, at once;
/// commands never get one and are dropped when invalid. A write to a characteristic
/// value is the application's to accept: `.writeRequested` holds the answer back until
/// `completeWrite`. Values of attributes that need encryption never leave on a link
/// without it, not even as a match in Find By Type Value, nor as a notification. A
/// central sending faster than `Configuration.requestsPerSecond` (beyond a burst) gets
/// the bearer closed. Nothing here grows with the input.
public struct GATTServer: Sendable {
    public struct Configuration: Hashable, Sendable {
        /// Our receive MTU, offered in Exchange MTU; ATT_MTU becomes the smaller of it and the client's.
        public var mtu: Int
        /// PDUs a central may send back to back before the rate counts.
        public var requestBurst: Int
        /// PDUs per second a central may keep sending; a compliant one waits for each
        /// answer, a round trip of at least one connection event, and stays far below.
        public var requestsPerSecond: Int
        /// ATT's transaction timeout, for the confirmation of an indication (§3.3.3).
        public var indicationTimeout: Duration

        public init(mtu: Int = 23, requestBurst: Int = 64, requestsPerSecond: Int = 250, indicationTimeout: Duration = .seconds(30)) {
            self.mtu = min(517, max(23, mtu))
            self.requestBurst = max(1, requestBurst)
            self.requestsPerSecond = max(1, requestsPerSecond)
            self.indicationTimeout = indicationTimeout
        }
    }

    public enum Action: Hashable, Sendable {
        /// An ATT PDU for the peer (at most ATT_MTU bytes).
        case send([UInt8])
        /// A Write Request to a characteristic value: answer with `completeWrite`.
        case writeRequested(handle: UInt16, value: [UInt8])
        /// A Write Command to a characteristic value (no answer; nothing is stored).
        case writeCommand(handle: UInt16, value: [UInt8])
        /// The central changed a client characteristic configuration.
        case subscriptionChanged(valueHandle: UInt16, GATTSubscription)
        /// The outstanding indication was confirmed.
        case indicationConfirmed(valueHandle: UInt16)
        /// ATT_MTU after the Exchange MTU.
        case mtuExchanged(Int)
        /// The bearer is closed for this reason: disconnect the link.
        case close(GATTServerCloseReason)
    }

    public struct Counters: Hashable, Sendable {
        public var requestsAnswered = 0
        public var errorResponses = 0
        public var commandsDropped = 0
        /// Requests while a write waited for the application (the client broke ATT's one-at-a-time rule).
        public var requestsWhileWriting = 0
        public var unsolicitedPDUs = 0
        public var droppedAfterClose = 0
        public init() {}
    }

    private struct PendingIndication: Sendable {
        var valueHandle: UInt16
        var deadline: Instant
    }

    public let database: GATTDatabase
    public let configuration: Configuration
    public private(set) var counters = Counters()
    /// ATT_MTU: 23 until an Exchange MTU.
    public private(set) var mtu = 23
    public private(set) var closeReason: GATTServerCloseReason?
    private var mtuExchanged = false
    private var values: [UInt16: GATTStoredValue] = [:]
    private var subscriptions: [UInt16: GATTSubscription] = [:]
    private var pendingWrite: UInt16?
    private var pendingIndication: PendingIndication?
    /// The rate limit as a virtual schedule (generic cell rate): when the next PDU would be due.
    private var theoreticalArrival: Instant?
    private var latestInput: Instant?

    public init(database: GATTDatabase, configuration: Configuration = Configuration()) {
        self.database = database
        self.configuration = configuration
        for attribute in database.attributes {
            if case .value(.variable(let initial, _), _, _, _) = attribute.kind { values[attribute.handle] = initial }
        }
    }

    public var isClosed: Bool { closeReason != nil }
    public var isWaitingForWrite: Bool { pendingWrite != nil }
    public var hasPendingIndication: Bool { pendingIndication != nil }
    public var nextDeadline: Instant? { isClosed ? nil : pendingIndication?.deadline }

    public func subscription(valueHandle: UInt16) -> GATTSubscription { subscriptions[valueHandle] ?? [] }

    /// The current value of a characteristic held by the server.
    public func storedValue(_ handle: UInt16) -> GATTStoredValue? { values[handle] }

    // MARK: The application

    /// Sets a `.variable` characteristic value.
    public mutating func setValue(_ value: GATTStoredValue, at handle: UInt16) throws(GATTServerError) {
        guard case .value(.variable(_, let maxLength), _, _, _)? = database.attribute(handle)?.kind else { throw .notVariable(handle) }
        if case .bytes(let bytes) = value, bytes.count > maxLength { throw .valueTooLong(handle) }
        values[handle] = value
    }

    /// Answers the `.writeRequested` outstanding: nil accepts it (Write Response), an
    /// error code refuses it.
    public mutating func completeWrite(error: ATTErrorCode?) -> [Action] {
        guard let handle = pendingWrite else { return [] }
        pendingWrite = nil
        guard !isClosed else { return [] }
        if let error {
            counters.errorResponses += 1
            return [errorResponse(.writeRequest, handle, error)]
        }
        counters.requestsAnswered += 1
        return [.send([ATTOpcode.writeResponse.rawValue])]
    }

    /// A notification of `value` (cut to ATT_MTU - 3) when the central subscribed to them.
    public mutating func notify(handle: UInt16, value: [UInt8], security: ATTLinkSecurity) throws(GATTServerError) -> [Action] {
        try checkUpdate(handle, .notify, .notifications, security)
        return [.send(valuePDU(.handleValueNotification, handle, value))]
    }

    /// An indication; one at a time until the central confirms it, within `indicationTimeout`.
    public mutating func indicate(handle: UInt16, value: [UInt8], security: ATTLinkSecurity,
                                  now: Instant) throws(GATTServerError) -> [Action] {
        try checkUpdate(handle, .indicate, .indications, security)
        guard pendingIndication == nil else { throw .indicationOutstanding }
        pendingIndication = PendingIndication(valueHandle: handle, deadline: now + configuration.indicationTimeout)
        return [.send(valuePDU(.handleValueIndication, handle, value))]
    }

    private func checkUpdate(_ handle: UInt16, _ property: GATTCharacteristicProperties, _ needed: GATTSubscription,
                             _ security: ATTLinkSecurity) throws(GATTServerError) {
        guard !isClosed else { throw .closed }
        guard case .value(_, let properties, let requirement, _)? = database.attribute(handle)?.kind,
              properties.contains(property) else { throw .notUpdatable(handle) }
        guard security.refusal(for: requirement) == nil else { throw .insufficientSecurity(handle) }
        guard subscription(valueHandle: handle).contains(needed) else { throw .notSubscribed(handle) }
    }

    private func valuePDU(_ opcode: ATTOpcode, _ handle: UInt16, _ value: [UInt8]) -> [UInt8] {
        var pdu = [opcode.rawValue]
        pdu.appendLE(handle)
        pdu.append(contentsOf: value.prefix(mtu - 3))
        return pdu
    }

    // MARK: The link

    /// Call at `nextDeadline`: an unconfirmed indication closes the bearer.
    public mutating func timerFired(now: Instant) -> [Action] {
        guard !isClosed, let pending = pendingIndication, pending.deadline <= now else { return [] }
        return close(.indicationNotConfirmed)
    }

    /// The link is gone: nothing more is sent.
    public mutating func linkClosed() {
        if closeReason == nil { closeReason = .linkClosed }
        pendingWrite = nil
        pendingIndication = nil
    }

    private mutating func close(_ reason: GATTServerCloseReason) -> [Action] {
        closeReason = reason
        pendingWrite = nil
        pendingIndication = nil
        return [.close(reason)]
    }

    /// Whether one more PDU keeps the central within its rate. Time going backwards
    /// counts as none passing.
    private mutating func admit(now: Instant) -> Bool {
        let interval = Duration.nanoseconds(1_000_000_000 / Int64(configuration.requestsPerSecond))
        let clock = max(latestInput ?? now, now)
        latestInput = clock
        let start = max(theoreticalArrival ?? clock, clock)
        guard start - clock < interval * configuration.requestBurst else { return false }
        theoreticalArrival = start + interval
        return true
    }

    // MARK: The peer

    /// An ATT PDU from the peer (the L2CAP ATT channel's payload), on a link of `security`.
    public mutating func receive(_ pdu: [UInt8], security: ATTLinkSecurity, now: Instant) -> [Action] {
        guard !isClosed else {
            counters.droppedAfterClose += 1
            return []
        }
        guard admit(now: now) else { return close(.flooded) }
        guard let first = pdu.first else {
            counters.unsolicitedPDUs += 1
            return []
        }
        let opcode = ATTOpcode(rawValue: first)
        if opcode.isCommand { return command(opcode, pdu, security: security) }
        switch opcode {
        case .handleValueConfirmation:
            guard pdu.count == 1, let pending = pendingIndication else {
                counters.unsolicitedPDUs += 1
                return []
            }
            pendingIndication = nil
            return [.indicationConfirmed(valueHandle: pending.valueHandle)]
        case .handleValueIndication:
            // The peer's own server indicating: confirm, so its bearer does not stall.
            guard pdu.count >= 3, pdu.count <= mtu else {
                counters.unsolicitedPDUs += 1
                return []
            }
            return [.send([ATTOpcode.handleValueConfirmation.rawValue])]
        case .handleValueNotification:
            counters.unsolicitedPDUs += 1
            return []
        default:
            if opcode.isResponse {
                counters.unsolicitedPDUs += 1
                return []
            }
        }
        guard pendingWrite == nil else {
            counters.requestsWhileWriting += 1
            return []
        }
        let actions = pdu.count <= mtu ? request(opcode, pdu, security: security) : [errorResponse(opcode, 0, .invalidPDU)]
        for case .send(let answer) in actions {
            if answer.first == ATTOpcode.errorResponse.rawValue { counters.errorResponses += 1 } else { counters.requestsAnswered += 1 }
        }
        return actions
    }

    private mutating func request(_ opcode: ATTOpcode, _ pdu: [UInt8], security: ATTLinkSecurity) -> [Action] {
        var reader = HCIByteReader(pdu[1...], context: .aboveHCI)
        switch opcode {
        case .exchangeMTURequest:
            guard pdu.count == 3, let clientMTU = try? reader.u16() else { return [errorResponse(opcode, 0, .invalidPDU)] }
            var answer = [ATTOpcode.exchangeMTUResponse.rawValue]
            answer.appendLE(UInt16(configuration.mtu))
            // ATT_MTU is set once per connection; a repeated request is answered but changes nothing.
            guard !mtuExchanged else { return [.send(answer)] }
            mtuExchanged = true
            mtu = max(23, min(Int(clientMTU), configuration.mtu))
            return [.send(answer), .mtuExchanged(mtu)]
        case .findInformationRequest, .findByTypeValueRequest, .readByTypeRequest, .readByGroupTypeRequest:
            return [discovery(opcode, pdu, security: security)]
        case .readRequest, .readBlobRequest, .readMultipleRequest:
            return [read(opcode, pdu, security: security)]
        case .writeRequest:
            return writeRequest(pdu, security: security)
        default:
            // Prepare/Execute Write (no value here needs a long write), Read Multiple
            // Variable and whatever else: not served.
            return [errorResponse(opcode, 0, .requestNotSupported)]
        }
    }

    func errorResponse(_ request: ATTOpcode, _ handle: UInt16, _ code: ATTErrorCode) -> Action {
        var pdu = [ATTOpcode.errorResponse.rawValue, request.rawValue]
        pdu.appendLE(handle)
        pdu.append(code.rawValue)
        return .send(pdu)
    }

    // MARK: Values

    enum Readout {
        case value([UInt8])
        case refused(ATTErrorCode)
    }

    /// What reading `attribute` on this link gives: its value, or the error that refuses it.
    func readout(_ attribute: GATTAttribute, security: ATTLinkSecurity) -> Readout {
        switch attribute.readAccess {
        case .notPermitted: return .refused(.readNotPermitted)
        case .required(let requirement):
            if let code = security.refusal(for: requirement) { return .refused(code) }
        }
        switch attribute.kind {
        case .service(_, let value), .characteristicDeclaration(let value), .descriptor(let value):
            return .value(value)
        case .value(.fixed(let value), _, _, _):
            return .value(value)
        case .value(.variable, _, _, _):
            switch values[attribute.handle] {
            case .bytes(let value)?: return .value(value)
            case .unavailable(let code)?: return .refused(code)
            case nil: return .refused(.unlikelyError)
            }
        case .clientConfiguration(let valueHandle, _):
            var value = [UInt8]()
            value.appendLE(UInt16(subscription(valueHandle: valueHandle).rawValue))
            return .value(value)
        }
    }

    /// The refusal of a write to `attribute`, or nil.
    private func writeRefusal(_ attribute: GATTAttribute, security: ATTLinkSecurity) -> ATTErrorCode? {
        switch attribute.writeAccess {
        case .notPermitted: .writeNotPermitted
        case .required(let requirement): security.refusal(for: requirement)
        }
    }

    private mutating func writeRequest(_ pdu: [UInt8], security: ATTLinkSecurity) -> [Action] {
        var reader = HCIByteReader(pdu[1...], context: .aboveHCI)
        guard let handle = try? reader.u16() else { return [errorResponse(.writeRequest, 0, .invalidPDU)] }
        let value = Array(pdu[3...])
        guard let attribute = database.attribute(handle) else { return [errorResponse(.writeRequest, handle, .invalidHandle)] }
        if let code = writeRefusal(attribute, security: security) { return [errorResponse(.writeRequest, handle, code)] }
        switch attribute.kind {
        case .value(let source, let properties, _, _):
            guard properties.contains(.write) else { return [errorResponse(.writeRequest, handle, .writeNotPermitted)] }
            guard value.count <= source.maxWriteLength else { return [errorResponse(.writeRequest, handle, .invalidAttributeValueLength)] }
            pendingWrite = handle
            return [.writeRequested(handle: handle, value: value)]
        case .clientConfiguration(let valueHandle, let properties):
            switch configure(valueHandle, properties, value) {
            case .failure(let refusal): return [errorResponse(.writeRequest, handle, refusal.code)]
            case .success(let change): return [.send([ATTOpcode.writeResponse.rawValue])] + change
            }
        default:
            return [errorResponse(.writeRequest, handle, .writeNotPermitted)]
        }
    }

    private mutating func command(_ opcode: ATTOpcode, _ pdu: [UInt8], security: ATTLinkSecurity) -> [Action] {
        var reader = HCIByteReader(pdu[1...], context: .aboveHCI)
        guard opcode == .writeCommand, pdu.count <= mtu, let handle = try? reader.u16(),
              let attribute = database.attribute(handle), writeRefusal(attribute, security: security) == nil else {
            counters.commandsDropped += 1
            return []
        }
        let value = Array(pdu[3...])
        switch attribute.kind {
        case .value(let source, let properties, _, _) where properties.contains(.writeWithoutResponse) && value.count <= source.maxWriteLength:
            return [.writeCommand(handle: handle, value: value)]
        case .clientConfiguration(let valueHandle, let properties):
            if case .success(let change) = configure(valueHandle, properties, value) { return change }
        default:
            break
        }
        counters.commandsDropped += 1
        return []
    }

    /// A client characteristic configuration write: two bytes, only the bits the
    /// characteristic's properties allow; reserved bits are ignored.
    private mutating func configure(_ valueHandle: UInt16, _ properties: GATTCharacteristicProperties,
                                    _ value: [UInt8]) -> Result<[Action], ConfigurationRefusal> {
        guard value.count == 2 else { return .failure(ConfigurationRefusal(code: .invalidAttributeValueLength)) }
        let requested = GATTSubscription(rawValue: UInt16(value[0]) | UInt16(value[1]) << 8).intersection([.notifications, .indications])
        if requested.contains(.notifications) && !properties.contains(.notify) || requested.contains(.indications) && !properties.contains(.indicate) {
            return .failure(ConfigurationRefusal(code: .clientConfigurationImproperlyConfigured))
        }
        guard requested != subscription(valueHandle: valueHandle) else { return .success([]) }
        subscriptions[valueHandle] = requested
        return .success([.subscriptionChanged(valueHandle: valueHandle, requested)])
    }

    private struct ConfigurationRefusal: Error {
        var code: ATTErrorCode
    }
}

extension GATTValue {
    /// The longest value a central may write.
    var maxWriteLength: Int {
        switch self {
        case .fixed: GATTDatabase.maxValueLength
        case .variable(_, let maxLength): maxLength
        }
    }
}

/// What the central asked to receive from a characteristic (its client characteristic configuration).
public struct GATTSubscription: OptionSet, Hashable, Sendable {
    public let rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    public static let notifications = GATTSubscription(rawValue: 0x0001)
    public static let indications = GATTSubscription(rawValue: 0x0002)
}

/// Why the server closed its bearer.
public enum GATTServerCloseReason: Hashable, Sendable, CustomStringConvertible {
    /// The central sent faster than `GATTServer.Configuration.requestsPerSecond` allows.
    case flooded
    /// An indication went unconfirmed for ATT's transaction timeout.
    case indicationNotConfirmed
    case linkClosed

    public var description: String {
        switch self {
        case .flooded: "the central sent ATT PDUs faster than allowed"
        case .indicationNotConfirmed: "an indication was not confirmed in time"
        case .linkClosed: "link closed"
        }
    }
}

/// Why the application's notify, indicate or setValue was refused.
public enum GATTServerError: Error, Hashable, Sendable, CustomStringConvertible {
    case closed
    case notUpdatable(UInt16)
    case notVariable(UInt16)
    case valueTooLong(UInt16)
    case insufficientSecurity(UInt16)
    case notSubscribed(UInt16)
    case indicationOutstanding

    public var description: String {
        switch self {
        case .closed: "the ATT bearer is closed"
        case .notUpdatable(let handle): "handle \(handle) is no characteristic value with that property"
        case .notVariable(let handle): "handle \(handle) is no variable characteristic value"
        case .valueTooLong(let handle): "value too long for handle \(handle)"
        case .insufficientSecurity(let handle): "the link is not secure enough for handle \(handle)"
        case .notSubscribed(let handle): "the central did not subscribe to handle \(handle)"
        case .indicationOutstanding: "an indication is waiting for its confirmation"
        }
    }
}
