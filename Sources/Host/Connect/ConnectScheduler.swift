import EventLoop
import HCI

/// Persistent connect (see docs/persistent-connect.md), sans-IO: decides which tags sit in the controller's
/// Filter Accept List and when LE Create Connection is outstanding; the driver does the
/// HCI and reports back. Modelled on AOSP's le_impl.h connect list handling:
///
///     disarmed → arming (accept-list updates in flight) → armed (create-connection
///     pending, no host timer) → disarming (cancel sent, waiting for its completion and
///     for Connection Complete 0x02) → back to arming.
///
/// In accept-list mode an armed request stays outstanding for as long as the wanted set
/// does not change: a tag that starts advertising minutes later is connected by the same
/// request. A change that leaves the request serving only wanted tags settles first
/// (`selectionSettle`), so a crowd arriving costs at most one re-arm a second rather than
/// one per arrival; a full list that rotates anyway waits for its turn instead. Timers
/// exist only
/// where one request cannot serve every wanted tag: direct mode (one peer at a time,
/// rotated), more wanted tags than accept-list entries (rotated), a controller that
/// cannot scan while initiating (turns), after the controller refused a create-connection
/// (retry), and while a change of the wanted set settles.
public struct ConnectScheduler: Sendable {
    public enum Mode: Hashable, Sendable {
        case acceptList
        case direct
    }

    public struct Configuration: Hashable, Sendable {
        public var mode: Mode
        public var maxConnections: Int
        /// How long one direct create-connection waits before the next peer's turn.
        public var directRotation: Duration
        /// Only when more tags are wanted than the accept list holds.
        public var acceptListRotation: Duration
        public var rssiInterval: Duration
        /// Each turn's length when scanning and initiating cannot overlap.
        public var alternation: Duration
        public var retryAfterRefusal: Duration
        /// Accept-list size assumed when the controller did not say.
        public var assumedAcceptListSize: Int
        /// How long an accept-list request stays armed before a change of the wanted
        /// selection re-arms it. Every re-arm is a cancel, list updates and a new
        /// create-connection, each a command the agent wakes up for; at a crowded door
        /// arrivals come faster than that, so the changes of one settle share one re-arm.
        /// It bounds the extra wait of a newly wanted tag. Zero re-arms at every change.
        public var selectionSettle: Duration

        public init(mode: Mode = .acceptList, maxConnections: Int = 4, directRotation: Duration = .seconds(5),
                    acceptListRotation: Duration = .seconds(10), rssiInterval: Duration = .seconds(1),
                    alternation: Duration = .seconds(2), retryAfterRefusal: Duration = .seconds(1),
                    assumedAcceptListSize: Int = 8, selectionSettle: Duration = .seconds(1)) {
            self.mode = mode
            self.maxConnections = maxConnections
            self.directRotation = directRotation
            self.acceptListRotation = acceptListRotation
            self.rssiInterval = rssiInterval
            self.alternation = alternation
            self.retryAfterRefusal = retryAfterRefusal
            self.assumedAcceptListSize = assumedAcceptListSize
            self.selectionSettle = selectionSettle
        }
    }

    /// What bring-up learnt that matters here.
    public struct Capabilities: Hashable, Sendable {
        /// 0 when unknown.
        public var acceptListSize: Int
        public var canScanWhileInitiating: Bool

        public init(acceptListSize: Int, canScanWhileInitiating: Bool) {
            self.acceptListSize = acceptListSize
            self.canScanWhileInitiating = canScanWhileInitiating
        }

        public init(acceptListSize: Int, supportedStates: LESupportedStates, activeScanning: Bool) {
            self.init(acceptListSize: acceptListSize,
                      canScanWhileInitiating: supportedStates.canScanWhileInitiating(active: activeScanning))
        }
    }

    /// The phase, for tests, status and the log.
    public enum Phase: Hashable, Sendable {
        case unavailable
        case disarmed
        case arming
        case armed
        case disarming
    }

    struct Wanted: Sendable {
        var peer: ConnectPeer
        var tracked: Bool
        /// Fairness: the lower, the sooner this tag gets an accept-list slot or a direct turn.
        var served: UInt64
    }

    struct Connection: Sendable {
        var tagIndex: Int?
        var nextRSSI: Instant?
    }

    enum Target: Hashable, Sendable {
        case acceptList
        case direct(tagIndex: Int)
    }

    enum State: Sendable {
        case unavailable
        case disarmed
        case arming(outstanding: Int)
        case armed(Target, until: Instant?)
        /// Cancel sent; done when it is answered and initiating has ended (Connection
        /// Complete, usually 0x02).
        case disarming(cancelAnswered: Bool, initiatingEnded: Bool)
        /// Waiting before the next try (a refused create-connection or a scanning turn).
        case waiting(until: Instant)
    }

    public let configuration: Configuration
    var state: State = .unavailable
    var capabilities = Capabilities(acceptListSize: 0, canScanWhileInitiating: true)
    /// Lowered when the controller refuses additions (0x07) below its advertised size.
    var acceptListCapacity = 0
    /// How many entries the last arming's list updates meant the accept list to hold.
    var armingListCount = 0
    /// What the controller's accept list holds; nil when unknown (after a reset).
    var acceptList: Set<ConnectPeer>?
    var wanted: [Int: Wanted] = [:]
    var connections: [UInt16: Connection] = [:]
    /// Lowered when a create-connection is refused for resources (0x09, 0x0D).
    var learnedConnectionLimit: Int?
    var scanningPaused = false
    /// Set by `setInitiationPaused(_:now:)`: no create-connection while true.
    var initiationPaused = false
    var takeScanningTurn = false
    var serveCounter: UInt64 = 0
    /// When the current request was armed (meaningful while armed).
    var armedAt = Instant.zero
    /// While armed: the wanted selection changed and the request is re-armed for it at
    /// this instant (`armedAt + selectionSettle`); nil when the request still fits.
    var reArmAt: Instant?

    public init(configuration: Configuration = .init()) {
        self.configuration = configuration
    }

    // MARK: Queries

    public var phase: Phase {
        switch state {
        case .unavailable: .unavailable
        case .disarmed, .waiting: .disarmed
        case .arming: .arming
        case .armed: .armed
        case .disarming: .disarming
        }
    }

    /// The tag a live connection belongs to.
    public func tagIndex(forHandle handle: UInt16) -> Int? { connections[handle]?.tagIndex }

    public var connectionCount: Int { connections.count }

    public var wantedTags: [Int] { wanted.keys.sorted() }

    /// What the scheduler believes the controller's accept list holds.
    public var acceptListEntries: Set<ConnectPeer> { acceptList ?? [] }

    /// When `timerFired` should be called next; nil when no timer is needed.
    public var nextDeadline: Instant? {
        var deadline: Instant?
        func consider(_ instant: Instant?) {
            guard let instant else { return }
            if let current = deadline, current <= instant { return }
            deadline = instant
        }
        switch state {
        case .armed(_, let until):
            consider(until)
            consider(reArmAt)
        case .waiting(let until): consider(until)
        default: break
        }
        for connection in connections.values { consider(connection.nextRSSI) }
        return deadline
    }

    var connectionLimit: Int {
        let configured = max(1, configuration.maxConnections)
        guard let learnedConnectionLimit else { return configured }
        return min(configured, max(1, learnedConnectionLimit))
    }

    func isConnected(_ tagIndex: Int) -> Bool {
        connections.values.contains { $0.tagIndex == tagIndex }
    }

    /// Wanted tags without a connection, fairest first.
    var pending: [(index: Int, wanted: Wanted)] {
        wanted.filter { !isConnected($0.key) }
            .map { (index: $0.key, wanted: $0.value) }
            .sorted { ($0.wanted.served, $0.index) < ($1.wanted.served, $1.index) }
    }

    var effectiveCapacity: Int {
        let size = capabilities.acceptListSize > 0 ? capabilities.acceptListSize : configuration.assumedAcceptListSize
        return max(1, min(size, acceptListCapacity > 0 ? acceptListCapacity : size))
    }

    /// The peers the accept list should hold now.
    var selection: Set<ConnectPeer> { selection(of: pending) }

    func selection(of pending: [(index: Int, wanted: Wanted)]) -> Set<ConnectPeer> {
        Set(pending.prefix(effectiveCapacity).map(\.wanted.peer))
    }

    var overflows: Bool { pending.count > effectiveCapacity }
}
