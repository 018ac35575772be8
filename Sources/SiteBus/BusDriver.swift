#if canImport(Glibc)
import Glibc
#endif
import EventLoop

/// The site bus on the agent's loop (docs/site-bus.md): performs `BusSession`'s actions
/// over libmosquitto, in order, and feeds it what the library reports. It decides nothing:
/// what the outbox gives and takes, the journal and the counters are the hooks'.
public final class BusDriver {
    /// Where to connect and as whom.
    public struct Connection: Hashable, Sendable {
        public var host: String
        public var port: Int
        public var usesTLS: Bool
        public var caFile: String?
        public var clientId: String
        public var username: String?
        public var password: [UInt8]?

        public init(host: String, port: Int, usesTLS: Bool, caFile: String?, clientId: String, username: String?, password: [UInt8]?) {
            self.host = host
            self.port = port
            self.usesTLS = usesTLS
            self.caFile = caFile
            self.clientId = clientId
            self.username = username
            self.password = password
        }
    }

    public struct Hooks {
        public var stateChanged: (BusSession.BusState) -> Void
        /// What the journal says of the session (once per change, docs/site-bus.md).
        public var announce: (BusSession.BusAnnouncement) -> Void
        /// A neighbouring door's sightings, unchecked (SPEC §17: the door core checks them).
        public var sighting: (_ sender: String, _ payload: [UInt8]) -> Void = { _, _ in }
        public var refused: (BusRefusal) -> Void
        /// A message was acknowledged (`accepted`) or refused by the broker.
        public var published: (_ kind: BusTopicKind, _ accepted: Bool) -> Void

        public init(stateChanged: @escaping (BusSession.BusState) -> Void, announce: @escaping (BusSession.BusAnnouncement) -> Void,
                    sighting: @escaping (_ sender: String, _ payload: [UInt8]) -> Void = { _, _ in },
                    refused: @escaping (BusRefusal) -> Void, published: @escaping (BusTopicKind, Bool) -> Void) {
            self.stateChanged = stateChanged
            self.sighting = sighting
            self.announce = announce
            self.refused = refused
            self.published = published
        }
    }

    /// The keep-alive the door asks for (SPEC §18: at most 30 s).
    public static let keepAliveSeconds = 30

    private let loop: EventLoop
    private let hooks: Hooks
    /// Where events come from and their PUBACKs go: the outbox's sink `mqtt`, while it is
    /// started (none: no events are published).
    public var events: (any BusEventSource)? {
        didSet { if events != nil { eventsCommitted() } }
    }
    public private(set) var session: BusSession
    private var connection: Connection
    private var client: MosquittoClient?
    private var registration: EventLoop.Registration?
    /// Message ids of the current client's publishes not yet acknowledged.
    private var tokens: [Int32: BusSession.Token] = [:]
    private lazy var timer = DeadlineTimer(loop: loop) { [unowned self] in self.perform(self.session.timerFired(at: self.loop.now)) }
    private var miscTimer: EventLoop.TimerHandle?
    private var deliveredBatch: [Int64] = []
    private var flushRegistration: EventLoop.Registration?
    private var performing = false
    private var queued: [BusSession.Action] = []

    public init(loop: EventLoop, connection: Connection, settings: BusSession.Settings, hooks: Hooks, seed: UInt64) {
        self.loop = loop
        self.connection = connection
        self.hooks = hooks
        session = BusSession(settings: settings, seed: seed)
    }

    public var isUp: Bool { session.isUp }

    public func start() {
        if flushRegistration == nil {
            flushRegistration = loop.registerPendingSource(hasWork: { [unowned self] in !self.deliveredBatch.isEmpty }) { [unowned self] in
                self.flushDelivered()
            }
        }
        perform(session.start(at: loop.now))
    }

    /// New settings; a new broker or new credentials reconnect.
    public func reconfigure(connection: Connection, settings: BusSession.Settings) {
        session.reconfigure(settings)
        guard connection != self.connection else { return }
        self.connection = connection
        if client != nil {
            closeClient()
            perform(session.connectionLost(.lost("the configuration changed"), at: loop.now))
        }
    }

    /// `offline`, a clean disconnect, everything released.
    public func stop() {
        perform(session.stop())
        flushDelivered()
        if let flushRegistration { loop.unregister(flushRegistration) }
        flushRegistration = nil
        closeClient()
    }

    public func eventsCommitted() {
        perform(session.eventsCommitted(at: loop.now))
    }

    /// This door's sightings for its neighbours (SPEC §17). False: not sent, the session
    /// is not up (the session drops it; a report is worth something for 3 s only).
    @discardableResult
    public func publishSighting(_ payload: [UInt8]) -> Bool {
        let actions = session.publishSighting(payload)
        perform(actions)
        return !actions.isEmpty
    }

    public func setRetained(_ topic: String, payload: [UInt8]?, kind: BusTopicKind) {
        perform(session.setRetained(topic, payload: payload, kind: kind))
    }

    /// What the broker acknowledged this turn of the loop, recorded in one transaction.
    private func flushDelivered() {
        guard !deliveredBatch.isEmpty else { return }
        let batch = deliveredBatch
        deliveredBatch = []
        events?.delivered(batch)
    }

    // MARK: Performing

    private func perform(_ actions: [BusSession.Action]) {
        queued += actions
        // Actions that feed the machine (a read, a refused connect) come back here; they are
        // queued behind the ones in hand so the order stays the machine's.
        guard !performing else { return }
        performing = true
        defer { performing = false }
        while !queued.isEmpty {
            let action = queued.removeFirst()
            perform(action)
        }
        updateWriteInterest()
    }

    private func perform(_ action: BusSession.Action) {
        switch action {
        case let .connect(version5):
            openClient(version5: version5)
        case .disconnect:
            guard let client else { return }
            client.disconnect()
            flushBeforeClosing(client)
            closeClient()
        case let .publish(message, token):
            guard let client else { return }
            switch client.publish(message) {
            case let .success(mid): tokens[mid] = token
            case let .failure(failure) where failure.tooLarge:
                queued += session.tooLarge(token, at: loop.now)
            case .failure:
                break // the connection is going; its loss is reported by the library
            }
            handle(client.drain())
        case let .subscribe(topic, qos):
            _ = client?.subscribe(topic, qos: qos)
        case let .readEvents(after, limit):
            let read = events?.events(after: after, limit: limit) ?? []
            queued += session.eventsRead(read, limit: limit, at: loop.now)
        case let .delivered(sequences):
            deliveredBatch += sequences
        case let .undeliverable(sequence, reason):
            flushDelivered()
            events?.undeliverable(sequence, reason: reason)
        case let .armTimer(deadline):
            timer.arm(at: deadline)
        case let .stateChanged(state):
            hooks.stateChanged(state)
        case let .refused(refusal):
            hooks.refused(refusal)
        case let .announce(announcement):
            hooks.announce(announcement)
        case let .sighting(sender, payload):
            hooks.sighting(sender, payload)
        }
    }

    private func openClient(version5: Bool) {
        closeClient()
        let will = session.settings.listenOnly ? nil
            : BusMessage(topic: session.settings.topics.status, payload: BusPayloads.offline, retain: true, kind: .status)
        let client: MosquittoClient
        do {
            client = try MosquittoClient(
                clientId: connection.clientId, version5: version5,
                credentials: .init(username: connection.username, password: connection.password), will: will,
                tls: connection.usesTLS ? .init(caFile: connection.caFile) : nil,
                maximumPayload: max(session.settings.maximumReceived, session.settings.maximumSighting)
            )
        } catch {
            queued += session.connectFailed(.unreachable("\(error)"), at: loop.now)
            return
        }
        if let problem = client.connect(host: connection.host, port: connection.port, keepAliveSeconds: Self.keepAliveSeconds) {
            queued += session.connectFailed(client.lastLibraryError.map { .tls($0) } ?? .unreachable(problem), at: loop.now)
            return
        }
        let fd = client.socket
        guard fd >= 0 else {
            queued += session.connectFailed(.unreachable("no socket"), at: loop.now)
            return
        }
        self.client = client
        registration = loop.register(fileDescriptor: fd) { [unowned self] in self.readable() }
        miscTimer = loop.schedule(after: .seconds(1)) { [unowned self] in self.miscDue() }
        // What connecting queued (CONNECT, or a TLS handshake) may already have failed.
        handle(client.drain())
    }

    private func closeClient() {
        if let registration { loop.unregister(registration) }
        registration = nil
        if let miscTimer { _ = loop.cancel(miscTimer) }
        miscTimer = nil
        client = nil
        tokens = [:]
    }

    /// The DISCONNECT (and an `offline` before it) are written before the socket closes:
    /// at most a second, at the stop only.
    private func flushBeforeClosing(_ client: MosquittoClient) {
        var rounds = 0
        while client.wantsWrite, client.socket >= 0, rounds < 10 {
            var descriptor = pollfd(fd: client.socket, events: Int16(POLLOUT), revents: 0)
            _ = poll(&descriptor, 1, 100)
            _ = client.write()
            rounds += 1
        }
    }

    private func readable() {
        guard let client else { return }
        handle(client.read())
        updateWriteInterest()
    }

    private func writable() {
        guard let client else { return }
        handle(client.write())
        updateWriteInterest()
    }

    private func miscDue() {
        miscTimer = nil
        guard let client else { return }
        handle(client.misc())
        if self.client != nil { miscTimer = loop.schedule(after: .seconds(1)) { [unowned self] in self.miscDue() } }
        updateWriteInterest()
    }

    private func updateWriteInterest() {
        guard let registration, let client else { return }
        loop.setWritableCallback(registration, client.wantsWrite ? { [unowned self] in self.writable() } : nil)
    }

    private func handle(_ happenings: [MosquittoClient.Happening]) {
        guard let client, !happenings.isEmpty else { return }
        var actions: [BusSession.Action] = []
        for happening in happenings {
            switch happening {
            case let .connected(reason, sessionPresent):
                if reason == 0 {
                    actions += session.connected(sessionPresent: sessionPresent, at: loop.now)
                } else {
                    closeClient()
                    actions += session.connectFailed(.connack(reason, version5: client.version5), at: loop.now)
                }
            case let .disconnected(code, reason):
                let wasConnecting = session.state == .connecting
                let fault: BusConnectionFault = code == MosquittoClient.tlsCode ? .tls(reason)
                    : wasConnecting ? .unreachable(reason) : .lost(reason)
                closeClient()
                actions += wasConnecting ? session.connectFailed(fault, at: loop.now) : session.connectionLost(fault, at: loop.now)
            case let .acknowledged(mid, reason):
                guard let token = tokens.removeValue(forKey: mid) else { continue }
                hooks.published(token.kind, reason < 0x80)
                actions += session.acknowledged(token, reason: reason, at: loop.now)
            case let .message(topic, payload, payloadCount, qos, _):
                actions += session.received(topic: topic, payload: payload, payloadCount: payloadCount, qos: qos, at: loop.now)
            }
        }
        perform(actions)
    }
}

/// The outbox as the bus reads it (the sink `mqtt`, docs/site-bus.md).
public protocol BusEventSource: AnyObject {
    /// At most `limit` events the bus does not have yet, after `sequence`, in order.
    func events(after sequence: Int64, limit: Int) -> [BusSession.Event]
    /// The broker acknowledged these events.
    func delivered(_ sequences: [Int64])
    /// This event can never go to this broker (`reason` says why): a dead letter of the bus.
    func undeliverable(_ sequence: Int64, reason: String)
}
