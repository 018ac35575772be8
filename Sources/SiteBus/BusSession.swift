import EventLoop
import SplitMix

/// The door's session with the site's broker as a sans-IO machine (docs/site-bus.md):
/// it takes what happened (connected, refused, lost, acknowledged, received, the time)
/// and returns what to do, in order; `BusDriver` performs it over libmosquitto.
///
/// It decides when to (re)connect (backoff with jitter, the longest delay for faults only
/// an operator can fix), what a new connection publishes first (status `online`, then every
/// retained message the door holds, then the outbox's events), the events' window and
/// order, what a PUBACK means for the outbox, and what a received message is worth.
/// Memory is bounded: the retained messages by persons × 2, events in flight by the window.
public struct BusSession {
    /// One event of the outbox to publish.
    public struct Event: Hashable, Sendable {
        public var sequence: Int64
        public var body: [UInt8]
        public init(sequence: Int64, body: [UInt8]) {
            self.sequence = sequence
            self.body = body
        }
    }

    /// What a publish is, to know what its acknowledgement means.
    public enum Token: Hashable, Sendable {
        case event(Int64)
        case message(BusTopicKind)

        public var kind: BusTopicKind {
            switch self {
            case .event: .events
            case let .message(kind): kind
            }
        }
    }

    public enum Action: Equatable, Sendable {
        /// Open a new connection (a new client: nothing of the old one's in-flight state
        /// is kept; the outbox is the record), MQTT 5 unless `version5` is false.
        case connect(version5: Bool)
        /// Publish `offline` was asked before this: end the session cleanly.
        case disconnect
        case publish(BusMessage, Token)
        case subscribe(String, qos: Int)
        /// Read at most `limit` events this sink does not have yet, after `sequence`, and
        /// answer with `eventsRead`.
        case readEvents(after: Int64, limit: Int)
        /// The broker has these events (PUBACK): record them delivered to the bus.
        case delivered([Int64])
        /// This event can never go to this broker: a dead letter of the bus (the next go on).
        case undeliverable(Int64, reason: String)
        /// Wake `timerFired` then (nil: no timer).
        case armTimer(Instant?)
        /// The session's state changed: for the journal (once per change), the LEDs'
        /// neighbours, `status`, the heartbeat and the metrics.
        case stateChanged(BusState)
        /// Something the broker or a subscriber sent was refused: counted and, once per
        /// kind and minute, logged.
        case refused(BusRefusal)
        /// A line for the journal: once per change of state, not per retry, and a session
        /// that keeps dropping is said once until it stays up (docs/site-bus.md).
        case announce(BusAnnouncement)
        /// A neighbouring door's sightings (SPEC §17), as received: the door core checks them.
        case sighting(sender: String, payload: [UInt8])
    }

    public enum BusAnnouncement: Equatable, Sendable {
        case up(sessionPresent: Bool)
        case down(BusConnectionFault)
        /// The session came up and dropped again with the same fault, within
        /// `stableAfter`: said once; the next line is the one that says it stayed up.
        case flapping(BusConnectionFault)
    }

    public enum BusState: Equatable, Sendable {
        case connecting
        case up
        case down(BusConnectionFault)
        case stopped
    }

    public struct Settings: Hashable, Sendable {
        public var topics: BusTopics
        public var events: Bool
        public var homeAssistant: Bool
        /// Neighbouring doors are configured: sightings are published and read.
        public var sightings = false
        /// A reader of the neighbours' sightings only (`scan`, `calibrate`: docs/cli.md): no
        /// status (and no will), nothing retained, no events, no sightings published; the
        /// broker keeps no session for it. The door's own session is left alone.
        public var listenOnly = false
        /// A sighting longer than this is refused (512 persons of 10 bytes and a header).
        public var maximumSighting = 8192
        /// Events published and not yet acknowledged, at most.
        public var window: Int = 20
        public var maximumBackoff: Duration = .seconds(60)
        /// A received message longer than this is refused (only Home Assistant's status is
        /// read, a word).
        public var maximumReceived = 1024
        /// Home Assistant restarting (or a flood of its birth message) republishes at most
        /// this often.
        public var republishInterval: Duration = .seconds(5)
        /// A session up this long is stable: one that drops sooner with the fault last said
        /// is flapping.
        public var stableAfter: Duration = .seconds(60)

        public init(topics: BusTopics, events: Bool, homeAssistant: Bool) {
            self.topics = topics
            self.events = events
            self.homeAssistant = homeAssistant
        }
    }

    public private(set) var settings: Settings
    public private(set) var state: BusState = .stopped
    private var started = false
    private var version5 = true
    private var failures = 0
    private var reconnectAt: Instant?
    private var jitter: SplitMix64

    /// Retained messages the door holds (presence and discovery, by topic): published on
    /// every connection, since a broker restarted without persistence has forgotten them.
    private var retained: [String: BusMessage] = [:]
    /// Topics to clear (an empty retained message) at the next connection.
    private var clears: [String: BusTopicKind] = [:]
    private var lastRepublish: Instant?
    private var republishDue: Instant?

    /// Events: the highest sequence published on this connection, those in flight, and
    /// whether the last read found the outbox drained.
    private var publishedThrough: Int64 = 0
    private var inFlight: Set<Int64> = []
    private var drained = false
    /// After the broker refused an event (quota exceeded): no events before then.
    private var eventsPausedUntil: Instant?
    /// Since the broker refused an event: one event in flight until it takes one, so a
    /// verdict that changes between two packets (an ACL read again, a quota freed) cannot
    /// put a later event on the bus before an earlier one. `probe` is the one in flight.
    private var cautious = false
    private var probe: Int64?
    /// Events in flight at most now: one while cautious, else the window.
    private var eventWindow: Int { cautious ? 1 : settings.window }

    /// What the journal was last told, when the session last came up, whether it is
    /// flapping, and when an up session will count as stable.
    private var upSince: Instant?
    private var flapping = false
    private var stableAt: Instant?
    /// Whether the broker still had the door's session at the last connection.
    public private(set) var sessionPresent = false

    public init(settings: Settings, seed: UInt64) {
        self.settings = settings
        jitter = SplitMix64(seed: seed)
    }

    public var isUp: Bool { state == .up }
    public var eventsInFlight: Int { inFlight.count }
    public var retainedCount: Int { retained.count }

    // MARK: Inputs

    public mutating func start(at now: Instant) -> [Action] {
        guard !started else { return [] }
        started = true
        return connect(now)
    }

    /// New settings (SIGHUP); the connection itself is rebuilt by the driver when the
    /// broker or its credentials changed.
    public mutating func reconfigure(_ settings: Settings) {
        self.settings = settings
    }

    public mutating func connected(sessionPresent: Bool, at now: Instant) -> [Action] {
        guard started, state == .connecting else { return [] }
        failures = 0
        reconnectAt = nil
        state = .up
        self.sessionPresent = sessionPresent
        upSince = now
        publishedThrough = 0
        inFlight = []
        probe = nil
        drained = false
        var actions: [Action] = [.stateChanged(.up)]
        if flapping {
            stableAt = now + settings.stableAfter
        } else {
            actions += announce(.up(sessionPresent: sessionPresent))
        }
        if settings.listenOnly {
            if settings.sightings { actions.append(.subscribe(settings.topics.sightingsFilter, qos: 0)) }
            actions.append(.armTimer(nextDeadline()))
            return actions
        }
        actions.append(.publish(statusMessage(online: true), .message(.status)))
        if settings.homeAssistant { actions.append(.subscribe(settings.topics.homeAssistantStatus, qos: 1)) }
        if settings.sightings { actions.append(.subscribe(settings.topics.sightingsFilter, qos: 0)) }
        actions += publishClears()
        actions += republishAll(at: now)
        actions += pumpEvents(at: now)
        actions.append(.armTimer(nextDeadline()))
        return actions
    }

    /// The broker refused the connection, or it could not be made.
    public mutating func connectFailed(_ fault: BusConnectionFault, at now: Instant) -> [Action] {
        guard started, state == .connecting else { return [] }
        if fault == .protocolVersion, version5 {
            // Straight to 3.1.1: the broker answered, only the version was wrong.
            version5 = false
            return [.stateChanged(.down(fault)), .connect(version5: false), .stateChanged(.connecting)]
        }
        return wait(after: fault, at: now)
    }

    /// An established session ended (the broker closed it, the network went, keep-alive).
    public mutating func connectionLost(_ fault: BusConnectionFault, at now: Instant) -> [Action] {
        guard started, state == .up || state == .connecting else { return [] }
        inFlight = []
        return wait(after: fault, at: now)
    }

    /// The broker acknowledged a publish: `reason` is the PUBACK's reason code (0 success,
    /// ≥ 0x80 refused; MQTT 3.1.1 has none: 0).
    public mutating func acknowledged(_ token: Token, reason: Int, at now: Instant) -> [Action] {
        guard state == .up else { return [] }
        switch token {
        case let .event(sequence):
            guard inFlight.remove(sequence) != nil else { return [] }
            if reason >= 0x80 {
                // Not taken (a full broker, an ACL): the event stays in the outbox; the
                // stream pauses and starts again from the outbox after a backoff.
                failures += 1
                eventsPausedUntil = now + delay(long: false)
                cautious = true
                probe = nil
                publishedThrough = 0
                drained = false
                return [.refused(.publishRefused(reason: reason, kind: .events)), .armTimer(nextDeadline())]
            }
            if cautious, probe == sequence {
                cautious = false
                probe = nil
            }
            return [.delivered([sequence])] + pumpEvents(at: now)
        case let .message(kind):
            return reason >= 0x80 ? [.refused(.publishRefused(reason: reason, kind: kind))] : []
        }
    }

    /// The library refused to send a message larger than the broker takes (its maximum
    /// packet size): an event becomes the bus's dead letter and the stream goes on; other
    /// messages are counted.
    public mutating func tooLarge(_ token: Token, at now: Instant) -> [Action] {
        guard state == .up else { return [] }
        switch token {
        case let .event(sequence):
            guard inFlight.remove(sequence) != nil else { return [] }
            return [.refused(.tooLarge(kind: .events)),
                    .undeliverable(sequence, reason: "larger than the broker's maximum packet size")] + pumpEvents(at: now)
        case let .message(kind):
            return [.refused(.tooLarge(kind: kind))]
        }
    }

    /// The answer to `readEvents`: events in `sequence` order after the asked sequence.
    public mutating func eventsRead(_ events: [Event], limit: Int, at now: Instant) -> [Action] {
        // A read asked before a refusal and answered after it (one batch of the broker's
        // acknowledgements can hold both) was for the stream as it was: dropped, and the
        // outbox is read again from the start when the pause ends.
        guard state == .up, settings.events, eventsPausedUntil == nil else { return [] }
        var actions: [Action] = []
        for event in events where event.sequence > publishedThrough {
            guard inFlight.count < eventWindow else { break }
            publishedThrough = event.sequence
            inFlight.insert(event.sequence)
            if cautious { probe = event.sequence }
            actions.append(.publish(BusMessage(topic: settings.topics.events, payload: event.body, retain: false, kind: .events),
                                    .event(event.sequence)))
        }
        if events.count < limit { drained = true }
        return actions + (drained ? [] : pumpEvents(at: now))
    }

    /// Events were committed to the outbox.
    public mutating func eventsCommitted(at now: Instant) -> [Action] {
        drained = false
        return pumpEvents(at: now)
    }

    /// A message on a subscribed topic (or not).
    /// This door's sightings (SPEC §17): published at once when the session is up, else
    /// dropped (a sighting is worth something for 3 s only, never stored).
    public mutating func publishSighting(_ payload: [UInt8]) -> [Action] {
        guard state == .up, settings.sightings, !settings.listenOnly else { return [] }
        let message = BusMessage(topic: settings.topics.sightings, payload: payload, qos: 0, retain: false, kind: .sightings)
        return [.publish(message, .message(.sightings))]
    }

    public mutating func received(topic: String, payload: [UInt8]?, payloadCount: Int, qos: Int, at now: Instant) -> [Action] {
        guard state == .up else { return [] }
        if settings.sightings, let sender = settings.topics.sightingSender(topic) {
            guard sender != settings.topics.gateway else { return [] } // its own, back from the broker
            guard payloadCount <= settings.maximumSighting, let payload else { return [.refused(.oversizedSighting)] }
            return [.sighting(sender: sender, payload: payload)]
        }
        let payloadStartsOnline = payload.map { $0 == BusPayloads.online } ?? false
        guard topic == settings.topics.homeAssistantStatus, settings.homeAssistant else {
            return [.refused(.unexpectedTopic)]
        }
        if qos > 1 { return [.refused(.qos2)] }
        if payloadCount > settings.maximumReceived { return [.refused(.oversized)] }
        guard payloadStartsOnline else { return [] }
        // Home Assistant (re)started: it has what was retained, unless the broker lost it
        // too; republished at most every `republishInterval`, whatever floods the topic.
        if let last = lastRepublish, now < last + settings.republishInterval {
            if republishDue == nil { republishDue = last + settings.republishInterval }
            return [.armTimer(nextDeadline())]
        }
        return republishAll(at: now)
    }

    public mutating func timerFired(at now: Instant) -> [Action] {
        var actions: [Action] = []
        if let at = reconnectAt, now >= at, case .down = state {
            reconnectAt = nil
            actions += connect(now)
        }
        if let due = republishDue, now >= due, state == .up {
            republishDue = nil
            actions += republishAll(at: now)
        }
        if let at = stableAt, now >= at, state == .up {
            stableAt = nil
            flapping = false
            actions += announce(.up(sessionPresent: sessionPresent))
        }
        if let until = eventsPausedUntil, now >= until {
            eventsPausedUntil = nil
            actions += pumpEvents(at: now)
        }
        actions.append(.armTimer(nextDeadline()))
        return actions
    }

    /// The door stops: `offline`, retained, then a clean disconnect (which discards the will).
    public mutating func stop() -> [Action] {
        guard started else { return [] }
        started = false
        let wasUp = state == .up
        state = .stopped
        reconnectAt = nil
        var actions: [Action] = []
        if wasUp, !settings.listenOnly { actions.append(.publish(statusMessage(online: false), .message(.status))) }
        actions += [.disconnect, .armTimer(nil), .stateChanged(.stopped)]
        return actions
    }

    // MARK: Retained state

    /// Sets the retained message of `topic` (presence or discovery); `nil` clears it (an
    /// empty retained message, for a person removed).
    public mutating func setRetained(_ topic: String, payload: [UInt8]?, kind: BusTopicKind) -> [Action] {
        if let payload {
            let message = BusMessage(topic: topic, payload: payload, retain: true, kind: kind)
            clears[topic] = nil
            guard retained[topic] != message else { return [] }
            retained[topic] = message
            return state == .up ? [.publish(message, .message(kind))] : []
        }
        guard retained.removeValue(forKey: topic) != nil || clears[topic] == nil else { return [] }
        clears[topic] = kind
        return state == .up ? publishClears() : []
    }

    /// The topics the door holds retained now.
    public var retainedTopics: Set<String> { Set(retained.keys) }

    // MARK: Steps

    private mutating func connect(_ now: Instant) -> [Action] {
        state = .connecting
        return [.stateChanged(.connecting), .connect(version5: version5)]
    }

    private mutating func wait(after fault: BusConnectionFault, at now: Instant) -> [Action] {
        let wasUp = state == .up
        failures += 1
        state = .down(fault)
        reconnectAt = now + delay(long: fault.needsOperator)
        stableAt = nil
        var actions: [Action] = [.stateChanged(.down(fault))]
        if wasUp, let since = upSince, now < since + settings.stableAfter, lastFault == fault {
            // Up and down again with the same fault: said once, then quiet until stable.
            if !flapping {
                flapping = true
                actions += announce(.flapping(fault))
            }
        } else if lastFault != fault || wasUp {
            flapping = false
            actions += announce(.down(fault))
        }
        upSince = nil
        return actions + [.armTimer(nextDeadline())]
    }

    /// The fault the journal was last told of (through a down or a flapping line).
    private var lastFault: BusConnectionFault?

    private mutating func announce(_ announcement: BusAnnouncement) -> [Action] {
        switch announcement {
        case let .down(fault), let .flapping(fault): lastFault = fault
        case .up: break
        }
        return [.announce(announcement)]
    }

    /// About 1, 2, 4 … s, at most `maximumBackoff`, ±20 %; faults only an operator can fix
    /// wait near the maximum. Jittered so doors that lost the broker together do not
    /// return in lockstep.
    private mutating func delay(long: Bool) -> Duration {
        let maximum = Double(settings.maximumBackoff.components.seconds)
        let nominal = long ? maximum : min(maximum, Double(1 << min(failures - 1, 20)))
        let factor = 0.8 + 0.4 * jitter.unit()
        return .milliseconds(Int64(min(maximum, nominal * factor) * 1000))
    }

    private func statusMessage(online: Bool) -> BusMessage {
        BusMessage(topic: settings.topics.status, payload: online ? BusPayloads.online : BusPayloads.offline,
                   retain: true, kind: .status)
    }

    private mutating func publishClears() -> [Action] {
        let actions = clears.sorted { $0.key < $1.key }.map { topic, kind in
            Action.publish(BusMessage(topic: topic, payload: [], retain: true, kind: kind), .message(kind))
        }
        clears = [:]
        return actions
    }

    /// Discovery before presence: Home Assistant creates the entity, then reads its state.
    private mutating func republishAll(at now: Instant) -> [Action] {
        lastRepublish = now
        republishDue = nil
        let ordered = retained.values.sorted { ($0.kind == .discovery ? 0 : 1, $0.topic) < ($1.kind == .discovery ? 0 : 1, $1.topic) }
        return ordered.map { .publish($0, .message($0.kind)) }
    }

    private mutating func pumpEvents(at now: Instant) -> [Action] {
        guard state == .up, settings.events, !drained, eventsPausedUntil == nil else { return [] }
        let room = eventWindow - inFlight.count
        guard room > 0 else { return [] }
        return [.readEvents(after: publishedThrough, limit: room)]
    }

    private func nextDeadline() -> Instant? {
        [reconnectAt, republishDue, eventsPausedUntil, stableAt].compactMap { $0 }.min()
    }
}

/// Something from the broker's side the door did not take (docs/site-bus.md): counted in
/// `beacon_gateway_bus_refused_total{reason}`, logged once per reason and minute.
public enum BusRefusal: Hashable, Sendable, CustomStringConvertible {
    case unexpectedTopic
    case qos2
    case oversized
    /// A sighting report larger than the door reads (counted as `oversized` here and in the
    /// sightings' figures).
    case oversizedSighting
    case publishRefused(reason: Int, kind: BusTopicKind)
    /// Larger than the broker's maximum packet size: never sent.
    case tooLarge(kind: BusTopicKind)

    public var reason: String {
        switch self {
        case .tooLarge: "too_large"
        case .unexpectedTopic: "unexpected_topic"
        case .qos2: "qos2"
        case .oversized, .oversizedSighting: "oversized"
        case .publishRefused: "publish_refused"
        }
    }

    public var description: String {
        switch self {
        case .unexpectedTopic: "a message on a topic the door did not subscribe to was ignored"
        case .qos2: "a QoS 2 message was ignored (the door subscribes at QoS 1)"
        case .oversized: "an oversized message was ignored"
        case .oversizedSighting: "an oversized sighting report was ignored"
        case let .tooLarge(kind):
            "a \(kind.rawValue) message is larger than the broker's maximum packet size; never sent (events: a dead letter of the bus, see outbox list --sink mqtt)"
        case let .publishRefused(reason, kind):
            reason == 0x97 ? "the broker refused a \(kind.rawValue) message: quota exceeded (0x97)"
                : "the broker refused a \(kind.rawValue) message (reason \(hex(reason)))"
        }
    }
}
