import EventLoop
import HCI

/// The whole LE data path of one controller, sans-IO: ACL flow control and reassembly,
/// the L2CAP fixed channels, and a GATT client per connection running one
/// write-then-read exchange at a time.
///
/// Connections come in two roles. Central ones (persistent connect, proofs) carry the
/// GATT client. Peripheral ones (a phone connected to enrolment's advertising) carry no
/// client: the central's ATT requests and commands come out as `.attributeRequest` for
/// a GATT server, and, when `delegatesPeripheralPairing` was on as the connection
/// opened, its SMP PDUs, LTK requests and encryption changes come out for that
/// connection's pairing responder (docs/pairing.md). Every LE Long Term Key Request
/// nobody takes gets `.rejectLongTermKeyRequest`: the controller waits for an answer.
///
/// Feed it the host's state changes, the HCI events the host passes up (connection
/// complete, disconnection complete, number of completed packets), ACL data and timer
/// ticks at `nextDeadline`; perform the actions in order. A controller reset (the host
/// leaving `.scanning`) tears every connection down locally: credits restored, partial
/// PDUs and queues dropped, running exchanges failed.
public struct LEDataPath: Sendable {
    public struct Configuration: Hashable, Sendable {
        public var gatt: GATTClient.Configuration
        /// The largest incoming L2CAP payload accepted.
        public var maxPDULength: Int
        public var maxQueuedFragments: Int
        /// Connections tracked at once; controllers allow far fewer.
        public var maxConnections: Int
        /// A whole exchange (discovery included) must end within this, however slowly a
        /// peer drips its answers within each request's own timeout.
        public var exchangeTimeout: Duration

        public init(gatt: GATTClient.Configuration = .init(), maxPDULength: Int = 512,
                    maxQueuedFragments: Int = 64, maxConnections: Int = 32, exchangeTimeout: Duration = .seconds(10)) {
            self.gatt = gatt
            self.exchangeTimeout = exchangeTimeout
            self.maxPDULength = maxPDULength
            self.maxQueuedFragments = maxQueuedFragments
            self.maxConnections = max(1, maxConnections)
        }
    }

    public enum CloseReason: Hashable, Sendable {
        /// Disconnection Complete with this reason.
        case disconnected(HCIStatus)
        /// The controller was reset (or the transport lost): no event will ever come.
        case controllerReset
    }

    public enum Action: Hashable, Sendable {
        case sendACL(HCIPacket)
        /// The ATT bearer died (timeout, protocol violation): disconnect the link.
        case disconnect(handle: UInt16, reason: HCIStatus)
        case exchangeFinished(handle: UInt16, Result<GATTWriteReadExchange.Completion, GATTWriteReadExchange.Failure>)
        /// The peer asked for these parameters and we accepted (LE Connection Update applies them).
        case connectionParametersAccepted(handle: UInt16, ConnectionParameterRequest)
        /// The connection is gone; comes before any exchange failure it causes.
        case connectionClosed(handle: UInt16, CloseReason)
        /// A central connected to our advertising; we are the peripheral.
        case peripheralConnected(LEConnectionComplete)
        /// An ATT request, command or confirmation from the central of a peripheral
        /// connection: for the GATT server (answers go back with `sendAttribute`).
        case attributeRequest(handle: UInt16, pdu: [UInt8])
        /// An SMP PDU for the pairing responder of a delegated peripheral connection
        /// (answers go back with `sendSecurityManager`).
        case securityManager(handle: UInt16, pdu: [UInt8])
        /// LE Long Term Key Request on a delegated peripheral connection: its pairing
        /// responder answers (LE Long Term Key Request Reply or Negative Reply).
        case longTermKeyRequested(LELongTermKeyRequest)
        /// LE Long Term Key Request nobody here can answer: send the Negative Reply.
        case rejectLongTermKeyRequest(handle: UInt16)
        /// Encryption Change or Key Refresh Complete on a peripheral connection.
        case encryptionChanged(handle: UInt16, status: HCIStatus, enabled: Bool)
    }

    public struct Counters: Hashable, Sendable {
        public var aclPacketsReceived = 0
        public var aclDropped = 0
        public var lastACLError: ACLDataError?
        public var sendFailures = 0
        public var connectionsRefused = 0
        /// ATT responses, notifications and indications from the central of a peripheral
        /// connection (we never ask it anything), and empty ATT PDUs there.
        public var unsolicitedAttributePDUs = 0
        public var longTermKeyRequestsRejected = 0
        public init() {}
    }

    private struct Connection: Sendable {
        var link: L2CAPFixedChannels.Link
        /// Interval, latency and supervision timeout as the controller last reported them.
        var parameters: ConnectionParameterRequest?
        var isEncrypted = false
        var client: GATTClient
        var exchange: GATTWriteReadExchange?
        var exchangeDeadline: Instant?

        var nextDeadline: Instant? {
            [client.nextDeadline, exchange == nil ? nil : exchangeDeadline].compactMap { $0 }.min()
        }
    }

    public let configuration: Configuration
    public private(set) var flow: ACLFlowControl
    public private(set) var reassembler: ACLReassembler
    public private(set) var channels = L2CAPFixedChannels()
    public private(set) var counters = Counters()
    private var connections: [UInt16: Connection] = [:]
    private var buffer: ACLBufferInfo?

    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        flow = ACLFlowControl(maxQueuedFragments: configuration.maxQueuedFragments)
        reassembler = ACLReassembler(maxPDULength: configuration.maxPDULength)
    }

    /// Whether the controller is up and its buffer sizes known.
    public var isReady: Bool { buffer != nil }
    public func isOpen(_ handle: UInt16) -> Bool { connections[handle] != nil }
    public var openHandles: [UInt16] { connections.keys.sorted() }
    /// Whether `handle` is a connection where we are the peripheral.
    public func isPeripheral(_ handle: UInt16) -> Bool { connections[handle]?.link.isPeripheral ?? false }
    public func isEncrypted(_ handle: UInt16) -> Bool { connections[handle]?.isEncrypted ?? false }
    /// A peripheral connection's interval, latency and supervision timeout (1.25 ms,
    /// events, 10 ms units) as the controller last reported them.
    public func peripheralParameters(_ handle: UInt16) -> ConnectionParameterRequest? {
        guard let connection = connections[handle], connection.link.isPeripheral else { return nil }
        return connection.parameters
    }

    /// Whether peripheral connections opened from now on hand SMP, LTK requests and
    /// encryption changes up (enrolment's window is open). Off: pairing is refused with
    /// Pairing Not Supported and LTK requests get the negative reply.
    public var delegatesPeripheralPairing = false
    public func client(on handle: UInt16) -> GATTClient? { connections[handle]?.client }

    public var nextDeadline: Instant? { connections.values.compactMap(\.nextDeadline).min() }

    // MARK: Controller

    /// The host's state: `.scanning` carries the buffer sizes; anything else means the
    /// controller is being (re)initialised and every connection is gone.
    public mutating func hostStateChanged(_ state: HostState) -> [Action] {
        if case .scanning(let info) = state {
            guard buffer != info.leBuffer else { return [] }
            let actions = tearDownAll()
            buffer = info.leBuffer
            flow.reset(buffer: info.leBuffer)
            return actions
        }
        guard buffer != nil || !connections.isEmpty else { return [] }
        let actions = tearDownAll()
        buffer = nil
        return actions
    }

    private mutating func tearDownAll() -> [Action] {
        var actions = [Action]()
        for handle in connections.keys.sorted() {
            actions.append(contentsOf: close(handle, reason: .controllerReset))
        }
        flow.reset(buffer: buffer ?? ACLBufferInfo(packetLength: 27, packetCount: 1, isShared: false))
        reassembler.reset()
        return actions
    }

    /// Events the host passes up; those not about the data path are ignored.
    public mutating func handle(_ event: HCIEvent, now: Instant) -> [Action] {
        switch event {
        case .leMeta(.connectionComplete(let complete)) where complete.status == .success && complete.role == .peripheral:
            let link = L2CAPFixedChannels.Link(isPeripheral: true, pairingDelegated: delegatesPeripheralPairing)
            guard connectionOpened(complete.connectionHandle, link: link) else { return [] }
            connections[complete.connectionHandle]?.parameters = ConnectionParameterRequest(
                intervalMin: complete.connectionInterval, intervalMax: complete.connectionInterval,
                peripheralLatency: complete.peripheralLatency, supervisionTimeout: complete.supervisionTimeout)
            return [.peripheralConnected(complete)]
        case .leMeta(.connectionComplete(let complete)) where complete.status == .success:
            connectionOpened(complete.connectionHandle)
            return []
        case .leMeta(.connectionUpdateComplete(let update)) where update.status == .success:
            guard connections[update.connectionHandle]?.link.isPeripheral == true else { return [] }
            connections[update.connectionHandle]?.parameters = ConnectionParameterRequest(
                intervalMin: update.connectionInterval, intervalMax: update.connectionInterval,
                peripheralLatency: update.peripheralLatency, supervisionTimeout: update.supervisionTimeout)
            return []
        case .leMeta(.longTermKeyRequest(let request)):
            guard connections[request.connectionHandle]?.link.pairingDelegated == true else {
                counters.longTermKeyRequestsRejected += 1
                return [.rejectLongTermKeyRequest(handle: request.connectionHandle)]
            }
            return [.longTermKeyRequested(request)]
        case .encryptionChange(let change):
            return encryptionChanged(change.connectionHandle, status: change.status, enabled: change.isEnabled)
        case .encryptionKeyRefreshComplete(let refresh):
            // A refresh keeps the link encrypted; a failed one is followed by a disconnection.
            return encryptionChanged(refresh.connectionHandle, status: refresh.status, enabled: refresh.status.isSuccess)
        case .disconnectionComplete(let complete) where complete.status == .success:
            return close(complete.connectionHandle, reason: .disconnected(complete.reason))
        case .numberOfCompletedPackets(let entries):
            return flow.completed(entries).map { .sendACL($0) }
        default:
            return []
        }
    }

    /// A connection exists (LE Connection Complete); calling it again changes nothing.
    /// False when it is not tracked (already open, or refused).
    @discardableResult
    public mutating func connectionOpened(_ handle: UInt16, link: L2CAPFixedChannels.Link = .central) -> Bool {
        guard connections[handle] == nil else { return false }
        guard handle <= ACLDataHeader.maxConnectionHandle, connections.count < configuration.maxConnections else {
            counters.connectionsRefused += 1
            return false
        }
        connections[handle] = Connection(link: link, client: GATTClient(configuration: configuration.gatt))
        flow.open(handle)
        return true
    }

    private mutating func encryptionChanged(_ handle: UInt16, status: HCIStatus, enabled: Bool) -> [Action] {
        guard let connection = connections[handle] else { return [] }
        connections[handle]?.isEncrypted = status.isSuccess && enabled
        guard connection.link.isPeripheral else { return [] }
        return [.encryptionChanged(handle: handle, status: status, enabled: enabled)]
    }

    private mutating func close(_ handle: UInt16, reason: CloseReason) -> [Action] {
        guard var connection = connections.removeValue(forKey: handle) else { return [] }
        reassembler.drop(handle: handle)
        var actions = flow.close(handle).map { Action.sendACL($0) }
        actions.append(.connectionClosed(handle: handle, reason))
        let clientActions = connection.client.linkClosed()
        actions.append(contentsOf: finishExchange(&connection, handle: handle, clientActions: clientActions))
        return actions
    }

    /// For a closed connection: fail the exchange with what the client reported.
    private func finishExchange(_ connection: inout Connection, handle: UInt16, clientActions: [GATTClient.Action]) -> [Action] {
        guard connection.exchange != nil else { return [] }
        for case .completed(.failure(let error), _) in clientActions {
            connection.exchange = nil
            return [.exchangeFinished(handle: handle, .failure(.gatt(error)))]
        }
        connection.exchange = nil
        return [.exchangeFinished(handle: handle, .failure(.gatt(.linkClosed)))]
    }

    // MARK: Data

    public mutating func receiveACL(_ packet: HCIPacket, now: Instant) -> [Action] {
        counters.aclPacketsReceived += 1
        let frame: L2CAPBasicFrame?
        do throws(ACLDataError) {
            guard packet.type == .acl else { throw .notACL }
            let (header, data) = try ACLDataHeader.decode(packet.payload)
            guard connections[header.connectionHandle] != nil else { throw .unknownConnection(header.connectionHandle) }
            frame = try reassembler.receive(header, data: data)
        } catch {
            counters.aclDropped += 1
            counters.lastACLError = error
            return []
        }
        guard let frame else { return [] }
        var actions = [Action]()
        let link = connections[frame.connectionHandle]?.link ?? .central
        for action in channels.receive(frame, on: link) {
            switch action {
            case .attribute(let handle, let pdu) where link.isPeripheral:
                actions.append(contentsOf: peripheralAttribute(pdu, on: handle))
            case .securityManager(let handle, let pdu):
                actions.append(.securityManager(handle: handle, pdu: pdu))
            case .attribute(let handle, let pdu):
                guard var connection = connections[handle] else { continue }
                let clientActions = connection.client.receive(pdu, now: now)
                actions.append(contentsOf: process(clientActions, on: &connection, handle: handle, now: now))
                connections[handle] = connection
            case .send(let handle, let pdu):
                actions.append(contentsOf: send(pdu, on: handle))
            case .connectionParametersAccepted(let handle, let request):
                actions.append(.connectionParametersAccepted(handle: handle, request))
            }
        }
        return actions
    }

    /// On a peripheral connection the central is the client: its requests, commands and
    /// confirmations are for the GATT server; its responses, notifications and
    /// indications answer nothing we asked and are dropped.
    private mutating func peripheralAttribute(_ pdu: [UInt8], on handle: UInt16) -> [Action] {
        guard let first = pdu.first else {
            counters.unsolicitedAttributePDUs += 1
            return []
        }
        let opcode = ATTOpcode(rawValue: first)
        switch opcode {
        case .handleValueNotification, .handleValueIndication, .multipleHandleValueNotification:
            counters.unsolicitedAttributePDUs += 1
            return []
        case _ where opcode.isResponse:
            counters.unsolicitedAttributePDUs += 1
            return []
        default:
            return [.attributeRequest(handle: handle, pdu: pdu)]
        }
    }

    /// An ATT PDU from our GATT server to the central of a peripheral connection.
    public mutating func sendAttribute(_ pdu: [UInt8], on handle: UInt16) -> [Action] {
        guard connections[handle]?.link.isPeripheral == true else { return [] }
        return send(L2CAPBasicFrame(connectionHandle: handle, channel: .attribute, payload: pdu).bytes, on: handle)
    }

    /// An SMP PDU from the pairing responder of a delegated peripheral connection.
    public mutating func sendSecurityManager(_ pdu: [UInt8], on handle: UInt16) -> [Action] {
        guard connections[handle]?.link.pairingDelegated == true else { return [] }
        return send(L2CAPBasicFrame(connectionHandle: handle, channel: .securityManager, payload: pdu).bytes, on: handle)
    }

    private mutating func send(_ l2capPDU: [UInt8], on handle: UInt16) -> [Action] {
        do {
            return try flow.send(l2capPDU, on: handle).map { .sendACL($0) }
        } catch {
            // Queue full or gone: the ATT timeout notices if it mattered.
            counters.sendFailures += 1
            return []
        }
    }

    // MARK: GATT

    /// Starts a write-then-read exchange on an open connection; its end comes back as
    /// `.exchangeFinished` (at once when the connection is unknown or busy).
    public mutating func startExchange(_ request: GATTWriteReadExchange.Request, on handle: UInt16, now: Instant) -> [Action] {
        guard buffer != nil, var connection = connections[handle] else {
            return [.exchangeFinished(handle: handle, .failure(.gatt(.linkClosed)))]
        }
        guard connection.exchange == nil else {
            return [.exchangeFinished(handle: handle, .failure(.gatt(.busy)))]
        }
        var exchange = GATTWriteReadExchange(request: request)
        let step = exchange.start(now: now)
        connection.exchange = exchange
        connection.exchangeDeadline = now + configuration.exchangeTimeout
        let actions = apply(step, on: &connection, handle: handle, now: now)
        connections[handle] = connection
        return actions
    }

    public mutating func timerFired(now: Instant) -> [Action] {
        var actions = [Action]()
        for handle in connections.keys.sorted() {
            guard var connection = connections[handle], let deadline = connection.nextDeadline, deadline <= now else { continue }
            let clientActions = connection.client.timerFired(now: now)
            actions.append(contentsOf: process(clientActions, on: &connection, handle: handle, now: now))
            if connection.exchange != nil, let deadline = connection.exchangeDeadline, deadline <= now {
                connection.client.abort(.timeout)
                connection.exchange = nil
                actions.append(.exchangeFinished(handle: handle, .failure(.gatt(.timeout))))
                actions.append(.disconnect(handle: handle, reason: .remoteUserTerminated))
            }
            connections[handle] = connection
        }
        return actions
    }

    private mutating func apply(_ step: GATTWriteReadExchange.Step, on connection: inout Connection, handle: UInt16, now: Instant) -> [Action] {
        switch step {
        case .run(let procedure):
            let clientActions = connection.client.start(procedure, now: now)
            return process(clientActions, on: &connection, handle: handle, now: now)
        case .finished(let result):
            connection.exchange = nil
            return [.exchangeFinished(handle: handle, result)]
        }
    }

    private mutating func process(_ clientActions: [GATTClient.Action], on connection: inout Connection,
                                  handle: UInt16, now: Instant) -> [Action] {
        var actions = [Action]()
        for action in clientActions {
            switch action {
            case .send(let pdu):
                let frame = L2CAPBasicFrame(connectionHandle: handle, channel: .attribute, payload: pdu)
                actions.append(contentsOf: send(frame.bytes, on: handle))
            case .completed(let result, let requests):
                guard var exchange = connection.exchange else { continue }
                let step = exchange.advance(result, requests: requests, now: now)
                connection.exchange = exchange
                actions.append(contentsOf: apply(step, on: &connection, handle: handle, now: now))
            case .disconnect:
                actions.append(.disconnect(handle: handle, reason: .remoteUserTerminated))
            }
        }
        return actions
    }
}
