import EventLoop
import HCI
import Host

/// Serves one `GATTDatabase` on the peripheral connections a `DataPathDriver` carries: a
/// `GATTServer` per connection, made when the central connects and dropped when the link
/// closes. Each ATT PDU reaches its connection's server with the link's security (from the
/// Encryption Change the data path reported for it); the server's actions are performed in
/// order: PDUs out through `answerAttribute`, a close as HCI Disconnect, its deadlines on
/// one timer. Writes to characteristic values are the application's (`writeHandler`).
/// See docs/gatt-server.md, "On the link".
public final class GATTServerDriver {
    /// A Write Request to a characteristic value on `connection`: nil accepts it (Write
    /// Response), an error code refuses it. Values set with `setValue` before returning
    /// are what the central reads next.
    public struct WriteRequest: Hashable, Sendable {
        public let connection: UInt16
        public let attribute: UInt16
        public let value: [UInt8]
    }

    public let dataPath: DataPathDriver
    public let database: GATTDatabase
    public let configuration: GATTServer.Configuration
    /// Answers writes; until set, every write is refused (Write Not Permitted).
    public var writeHandler: (WriteRequest, Instant) -> ATTErrorCode? = { _, _ in .writeNotPermitted }
    /// What else the servers report (write commands, subscriptions, MTU, confirmations,
    /// closes), with the connection.
    public var onServerAction: (UInt16, GATTServer.Action, Instant) -> Void = { _, _, _ in }

    private struct Connection {
        var server: GATTServer
        var security: ATTLinkSecurity
    }

    private var connections: [UInt16: Connection] = [:]
    private lazy var timer = DeadlineTimer(loop: dataPath.link.loop) { [unowned self] in
        self.timerFired(now: self.dataPath.link.loop.now)
    }

    public init(dataPath: DataPathDriver, database: GATTDatabase, configuration: GATTServer.Configuration = .init()) {
        self.dataPath = dataPath
        self.database = database
        self.configuration = configuration
    }

    /// Takes over the data path's ATT requests. Its peripheral connections, their security
    /// and their ends come through `peripheralAction(_:)` and `connectionClosed(_:)`, which
    /// the data path's owner calls before the application hears of them: a connection's
    /// server exists, and knows the link's security, by the time the application acts on it.
    public func attach() {
        dataPath.attributeRequestHandler = { [unowned self] handle, pdu, now in self.receive(pdu, on: handle, now: now) }
    }

    /// What the data path reports of a peripheral connection (`DataPathDriver.onPeripheral`):
    /// a new connection gets a server, an encryption change sets its security.
    public func peripheralAction(_ action: LEDataPath.Action) {
        switch action {
        case .peripheralConnected(let complete):
            connectionOpened(complete.connectionHandle)
        case .encryptionChanged(let handle, let status, let enabled):
            encryptionChanged(handle, encrypted: status.isSuccess && enabled)
        default:
            break
        }
    }

    /// The security the server checks accesses on `handle` against.
    public func security(on handle: UInt16) -> ATTLinkSecurity? { connections[handle]?.security }

    /// Raises the link's level once the application knows the key was authenticated
    /// (Numeric Comparison): the Encryption Change alone says only "encrypted".
    public func setAuthenticated(on handle: UInt16) {
        guard connections[handle]?.security.level == .encrypted else { return }
        connections[handle]?.security.level = .authenticated
    }

    /// Sets a variable characteristic value on one connection's server.
    public func setValue(_ value: GATTStoredValue, at attribute: UInt16, on handle: UInt16) throws(GATTServerError) {
        guard connections[handle] != nil else { throw .closed }
        try connections[handle]?.server.setValue(value, at: attribute)
    }

    // MARK: Inputs

    func connectionOpened(_ handle: UInt16) {
        connections[handle] = Connection(server: GATTServer(database: database, configuration: configuration), security: .unencrypted)
    }

    func encryptionChanged(_ handle: UInt16, encrypted: Bool) {
        guard let current = connections[handle]?.security.level else { return }
        connections[handle]?.security.level = encrypted ? max(current, .encrypted) : .unencrypted
    }

    /// The data path closed `handle` (`DataPathDriver.onConnectionClosed`): its server goes.
    public func connectionClosed(_ handle: UInt16) {
        connections[handle]?.server.linkClosed()
        connections[handle] = nil
        armTimer()
    }

    func receive(_ pdu: [UInt8], on handle: UInt16, now: Instant) {
        guard let security = connections[handle]?.security,
              let actions = connections[handle]?.server.receive(pdu, security: security, now: now) else {
            // A connection opened before `attach`: no server of ours holds it.
            if let answer = ATTErrorResponse.requestNotSupported(answering: pdu) { dataPath.answerAttribute(answer, on: handle, now: now) }
            return
        }
        perform(actions, on: handle, now: now)
    }

    private func timerFired(now: Instant) {
        for handle in connections.keys.sorted() {
            guard let deadline = connections[handle]?.server.nextDeadline, deadline <= now,
                  let actions = connections[handle]?.server.timerFired(now: now) else { continue }
            perform(actions, on: handle, now: now)
        }
        armTimer()
    }

    // MARK: Actions

    private func perform(_ actions: [GATTServer.Action], on handle: UInt16, now: Instant) {
        for action in actions {
            switch action {
            case .send(let pdu):
                dataPath.answerAttribute(pdu, on: handle, now: now)
            case .writeRequested(let attribute, let value):
                let refusal = writeHandler(WriteRequest(connection: handle, attribute: attribute, value: value), now)
                // The handler may have ended the connection.
                guard let answer = connections[handle]?.server.completeWrite(error: refusal) else { continue }
                perform(answer, on: handle, now: now)
            case .close:
                onServerAction(handle, action, now)
                dataPath.disconnect(handle)
            default:
                onServerAction(handle, action, now)
            }
        }
        armTimer()
    }

    private func armTimer() {
        timer.arm(at: connections.values.compactMap(\.server.nextDeadline).min())
    }
}
