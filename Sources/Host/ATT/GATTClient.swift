import EventLoop
import HCI

/// GATT client procedures over one ATT bearer, sans-IO: primary service discovery by
/// UUID (Find By Type Value), characteristic discovery (Read By Type), Write Request
/// and Read Request (Core Vol 3 Part G §4).
///
/// One procedure at a time. Discovery is bounded by `maxDiscoveryRequests`, so a peer
/// returning characteristics forever cannot keep us busy; results outside the range
/// asked for, or not increasing, close the bearer. Every `.completed` says how many
/// ATT requests the procedure took. A `.disconnect` action means the bearer is dead.
public struct GATTClient: Sendable {
    public struct Configuration: Hashable, Sendable {
        public var bearer: ATTBearer.Configuration
        public var maxDiscoveryRequests: Int

        public init(bearer: ATTBearer.Configuration = .init(), maxDiscoveryRequests: Int = 32) {
            self.bearer = bearer
            self.maxDiscoveryRequests = max(1, maxDiscoveryRequests)
        }
    }

    public enum Procedure: Hashable, Sendable {
        /// The first primary service with this UUID.
        case findPrimaryService(GATTUUID)
        /// Characteristic declarations in `range`, stopping early once every UUID in
        /// `until` was seen (empty: the whole range).
        case discoverCharacteristics(in: GATTHandleRange, until: Set<GATTUUID>)
        case write(handle: UInt16, value: [UInt8])
        case read(handle: UInt16)
    }

    public enum Outcome: Hashable, Sendable {
        /// The service's handle range, or nil when the peer has no such service.
        case service(GATTHandleRange?)
        case characteristics([GATTCharacteristic])
        case written
        case value([UInt8])
    }

    public enum Action: Hashable, Sendable {
        /// An ATT PDU for the peer.
        case send([UInt8])
        case completed(Result<Outcome, GATTError>, requests: Int)
        /// The bearer is dead (timeout or protocol violation): disconnect the link.
        case disconnect(GATTError)
    }

    private enum Running: Sendable {
        case findService
        case characteristics(range: GATTHandleRange, wanted: Set<GATTUUID>, found: [GATTCharacteristic], nextStart: UInt16)
        case write
        case read
    }

    public let configuration: Configuration
    public private(set) var bearer: ATTBearer
    private var running: Running?
    private var requestsInProcedure = 0

    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        bearer = ATTBearer(configuration: configuration.bearer)
    }

    public var isBusy: Bool { running != nil }
    public var nextDeadline: Instant? { bearer.nextDeadline }

    // MARK: Inputs

    public mutating func start(_ procedure: Procedure, now: Instant) -> [Action] {
        guard running == nil else { return [.completed(.failure(.busy), requests: 0)] }
        requestsInProcedure = 0
        switch procedure {
        case .findPrimaryService(let uuid):
            running = .findService
            var pdu = [ATTOpcode.findByTypeValueRequest.rawValue]
            pdu.appendLE(UInt16(0x0001))
            pdu.appendLE(UInt16(0xFFFF))
            pdu.append(contentsOf: GATTUUID.primaryService.attBytes)
            pdu.append(contentsOf: uuid.attBytes)
            return send(pdu, now: now)
        case .discoverCharacteristics(let range, let wanted):
            guard range.start >= 1, range.start <= range.end else {
                return [.completed(.success(.characteristics([])), requests: 0)]
            }
            running = .characteristics(range: range, wanted: wanted, found: [], nextStart: range.start)
            return send(readByType(from: range.start, to: range.end), now: now)
        case .write(let handle, let value):
            running = .write
            var pdu = [ATTOpcode.writeRequest.rawValue]
            pdu.appendLE(handle)
            pdu.append(contentsOf: value)
            return send(pdu, now: now)
        case .read(let handle):
            running = .read
            var pdu = [ATTOpcode.readRequest.rawValue]
            pdu.appendLE(handle)
            return send(pdu, now: now)
        }
    }

    /// An ATT PDU from the peer (the L2CAP ATT channel's payload).
    public mutating func receive(_ pdu: [UInt8], now: Instant) -> [Action] {
        handle(bearer.receive(pdu, now: now), now: now)
    }

    public mutating func timerFired(now: Instant) -> [Action] {
        handle(bearer.timerFired(now: now), now: now)
    }

    /// Disconnection or controller reset.
    public mutating func linkClosed() -> [Action] {
        _ = bearer.linkClosed()
        guard running != nil else { return [] }
        return finish(.failure(.linkClosed))
    }

    /// Gives up on the running procedure (a deadline above ATT's expired): the bearer is
    /// closed, as a late response could otherwise be taken for the next request's.
    public mutating func abort(_ error: GATTError) {
        running = nil
        requestsInProcedure = 0
        bearer.shutDown(error)
    }

    // MARK: Steps

    private mutating func send(_ pdu: [UInt8], now: Instant) -> [Action] {
        do {
            let actions = try bearer.request(pdu, now: now)
            requestsInProcedure += 1
            return actions.compactMap { if case .send(let bytes) = $0 { .send(bytes) } else { nil } }
        } catch {
            return finish(.failure(error))
        }
    }

    private mutating func finish(_ result: Result<Outcome, GATTError>) -> [Action] {
        running = nil
        let requests = requestsInProcedure
        requestsInProcedure = 0
        return [.completed(result, requests: requests)]
    }

    private mutating func handle(_ bearerActions: [ATTBearer.Action], now: Instant) -> [Action] {
        var actions = [Action]()
        for action in bearerActions {
            switch action {
            case .send(let pdu):
                actions.append(.send(pdu))
            case .response(let opcode, let parameters):
                actions.append(contentsOf: response(opcode, parameters, now: now))
            case .errorResponse(let request, let handle, let code):
                actions.append(contentsOf: errorResponse(request, handle, code))
            case .closed(let error):
                if running != nil { actions.append(contentsOf: finish(.failure(error))) }
                if error != .linkClosed { actions.append(.disconnect(error)) }
            }
        }
        return actions
    }

    private mutating func errorResponse(_ request: ATTOpcode, _ handle: UInt16, _ code: ATTErrorCode) -> [Action] {
        guard let running else { return [] }
        switch running {
        case .findService where code == .attributeNotFound:
            return finish(.success(.service(nil)))
        case .characteristics(_, _, let found, _) where code == .attributeNotFound:
            // The end of the list.
            return finish(.success(.characteristics(found)))
        default:
            return finish(.failure(.attError(request: request, handle: handle, code: code)))
        }
    }

    private mutating func response(_ opcode: ATTOpcode, _ parameters: [UInt8], now: Instant) -> [Action] {
        guard let running else { return [] }
        switch running {
        case .findService:
            // Found Attribute Handle and Group End Handle pairs; the first one is ours.
            var reader = HCIByteReader(parameters, context: .aboveHCI)
            guard parameters.count >= 4, parameters.count % 4 == 0, let start = try? reader.u16(), let end = try? reader.u16(),
                  start >= 1, end >= start else {
                return violation(.malformed(opcode))
            }
            return finish(.success(.service(GATTHandleRange(start: start, end: end))))
        case .write:
            guard parameters.isEmpty else { return violation(.malformed(opcode)) }
            return finish(.success(.written))
        case .read:
            return finish(.success(.value(parameters)))
        case .characteristics(let range, let wanted, var found, let nextStart):
            var reader = HCIByteReader(parameters, context: .aboveHCI)
            // Each entry: declaration handle, properties, value handle, 16- or 128-bit UUID.
            guard let length = try? reader.u8(), length == 7 || length == 21,
                  reader.remaining > 0, reader.remaining % Int(length) == 0 else {
                return violation(.malformed(opcode))
            }
            var last = nextStart
            var first = true
            while !reader.isAtEnd {
                guard let declaration = try? reader.u16(), let properties = try? reader.u8(), let value = try? reader.u16(),
                      let uuidBytes = try? reader.slice(Int(length) - 5), let uuid = GATTUUID(littleEndian: uuidBytes) else {
                    return violation(.malformed(opcode))
                }
                guard declaration >= nextStart, declaration <= range.end, first || declaration > last,
                      value > declaration, value <= range.end else {
                    return violation(.outOfOrder(opcode))
                }
                first = false
                last = declaration
                found.append(GATTCharacteristic(declarationHandle: declaration, properties: properties, valueHandle: value, uuid: uuid))
            }
            let seen = Set(found.map(\.uuid))
            if (!wanted.isEmpty && wanted.isSubset(of: seen)) || last >= range.end {
                return finish(.success(.characteristics(found)))
            }
            guard requestsInProcedure < configuration.maxDiscoveryRequests else {
                return violation(.endlessResponses(requests: requestsInProcedure))
            }
            self.running = .characteristics(range: range, wanted: wanted, found: found, nextStart: last + 1)
            return send(readByType(from: last + 1, to: range.end), now: now)
        }
    }

    /// The peer broke the protocol in a response: the bearer is closed like on a timeout.
    private mutating func violation(_ violation: ATTProtocolViolation) -> [Action] {
        let error = GATTError.protocolViolation(violation)
        bearer.shutDown(error)
        return finish(.failure(error)) + [.disconnect(error)]
    }

    private func readByType(from start: UInt16, to end: UInt16) -> [UInt8] {
        var pdu = [ATTOpcode.readByTypeRequest.rawValue]
        pdu.appendLE(start)
        pdu.appendLE(end)
        pdu.append(contentsOf: GATTUUID.characteristic.attBytes)
        return pdu
    }
}
