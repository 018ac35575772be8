import EventLoop
@testable import SiteBus
import Testing

/// The session's decisions on virtual time (docs/site-bus.md): what a connection publishes
/// first, the events' window and order, backoff, refusals, Home Assistant's births.
struct BusSessionTests {
    let topics = BusTopics(prefix: "bg", site: "S", gateway: "G", discoveryPrefix: "homeassistant")

    func session(events: Bool = true, window: Int = 3) -> BusSession {
        var settings = BusSession.Settings(topics: topics, events: events, homeAssistant: true)
        settings.window = window
        return BusSession(settings: settings, seed: 7)
    }

    func at(_ seconds: Double) -> Instant { Instant(nanoseconds: Int64(seconds * 1e9)) }

    func publishes(_ actions: [BusSession.Action]) -> [BusMessage] {
        actions.compactMap { if case let .publish(message, _) = $0 { message } else { nil } }
    }

    func reads(_ actions: [BusSession.Action]) -> [(Int64, Int)] {
        actions.compactMap { if case let .readEvents(after, limit) = $0 { (after, limit) } else { nil } }
    }

    func event(_ sequence: Int64) -> BusSession.Event { .init(sequence: sequence, body: Array("e\(sequence)".utf8)) }

    @Test func aConnectionPublishesStatusThenDiscoveryThenPresenceThenAsksForEvents() {
        var bus = session()
        _ = bus.setRetained(topics.presence("u1"), payload: [1], kind: .presence)
        _ = bus.setRetained(topics.discovery("u1"), payload: [2], kind: .discovery)
        #expect(bus.start(at: at(0)) == [.stateChanged(.connecting), .connect(version5: true)])
        let actions = bus.connected(sessionPresent: false, at: at(0.1))
        #expect(publishes(actions).map(\.topic) == [topics.status, topics.discovery("u1"), topics.presence("u1")])
        #expect(publishes(actions).allSatisfy { $0.retain && $0.qos == 1 })
        #expect(actions.contains(.subscribe("homeassistant/status", qos: 1)))
        #expect(reads(actions).map(\.0) == [0] && reads(actions).map(\.1) == [3])
    }

    @Test func eventsGoOutInOrderWithinTheWindowAndEachPubackIsRecordedDelivered() {
        var bus = session(window: 3)
        _ = bus.start(at: at(0))
        _ = bus.connected(sessionPresent: false, at: at(0))
        let first = bus.eventsRead([event(1), event(2), event(3)], limit: 3, at: at(0))
        #expect(publishes(first).map(\.payload) == [Array("e1".utf8), Array("e2".utf8), Array("e3".utf8)])
        #expect(reads(first).isEmpty) // the window is full
        let ack = bus.acknowledged(.event(1), reason: 0, at: at(0.01))
        #expect(ack.first == .delivered([1]))
        #expect(reads(ack).map(\.0) == [3] && reads(ack).map(\.1) == [1])
        // A drained outbox waits for the next commit.
        #expect(bus.eventsRead([], limit: 1, at: at(0.02)).isEmpty)
        #expect(bus.acknowledged(.event(2), reason: 0, at: at(0.03)) == [.delivered([2])])
        #expect(reads(bus.eventsCommitted(at: at(1))).map(\.0) == [3])
    }

    @Test func aLostConnectionStartsTheEventsAgainFromTheOutbox() {
        var bus = session()
        _ = bus.start(at: at(0))
        _ = bus.connected(sessionPresent: false, at: at(0))
        _ = bus.eventsRead([event(5), event(6)], limit: 3, at: at(0))
        let lost = bus.connectionLost(.lost("closed"), at: at(1))
        #expect(lost.first == .stateChanged(.down(.lost("closed"))))
        // The first retry comes after about a second (±20 %).
        guard case let .armTimer(deadline?) = lost.last else { Issue.record("no timer"); return }
        #expect(deadline >= at(1.8) && deadline <= at(2.2))
        #expect(bus.timerFired(at: at(1.5)).allSatisfy { if case .connect = $0 { false } else { true } })
        #expect(bus.timerFired(at: deadline).contains(.connect(version5: true)))
        let again = bus.connected(sessionPresent: true, at: deadline)
        // Events not acknowledged are read from the outbox again, from the start.
        #expect(reads(again).map(\.0) == [0])
        // A late PUBACK of the old connection means nothing now.
        #expect(bus.acknowledged(.event(5), reason: 0, at: deadline).isEmpty)
    }

    @Test func backoffDoublesToTheMaximumAndFaultsOnlyAnOperatorCanFixWaitTheLongest() {
        var bus = session()
        _ = bus.start(at: at(0))
        var now = at(0)
        var delays: [Double] = []
        for _ in 0 ..< 9 {
            let actions = bus.connectFailed(.unreachable("refused"), at: now)
            guard case let .armTimer(deadline?) = actions.last else { Issue.record("no timer"); return }
            delays.append(Double((deadline - now).components.seconds) + Double((deadline - now).components.attoseconds) / 1e18)
            now = deadline
            _ = bus.timerFired(at: now)
        }
        #expect(delays[0] >= 0.8 && delays[0] <= 1.2)
        #expect(delays[3] >= 6.4 && delays[3] <= 9.6)
        #expect(delays.last! <= 60 && delays.last! >= 48)
        let refused = bus.connectFailed(.badCredentials, at: now)
        guard case let .armTimer(deadline?) = refused.last else { Issue.record("no timer"); return }
        #expect(deadline - now >= .seconds(48))
    }

    @Test func aBrokerWithoutMQTT5IsAskedAgainAtOnceIn311() {
        var bus = session()
        _ = bus.start(at: at(0))
        let actions = bus.connectFailed(.protocolVersion, at: at(0.1))
        #expect(actions.contains(.connect(version5: false)))
        _ = bus.connected(sessionPresent: false, at: at(0.2))
        _ = bus.connectionLost(.lost("x"), at: at(1))
        #expect(bus.timerFired(at: at(10)).contains(.connect(version5: false)))
    }

    @Test func aRefusedEventPausesTheStreamAndItStartsAgainFromTheOutbox() {
        var bus = session()
        _ = bus.start(at: at(0))
        _ = bus.connected(sessionPresent: false, at: at(0))
        _ = bus.eventsRead([event(1)], limit: 3, at: at(0))
        let refused = bus.acknowledged(.event(1), reason: 0x97, at: at(1))
        #expect(refused.first == .refused(.publishRefused(reason: 0x97, kind: .events)))
        #expect(!refused.contains(.delivered([1])))
        #expect(reads(bus.eventsCommitted(at: at(1.1))).isEmpty) // paused
        let resumed = bus.timerFired(at: at(5))
        #expect(reads(resumed).map(\.0) == [0])
    }

    /// A broker whose verdict changes between two packets (an ACL read again, a quota freed)
    /// must not take a later event while refusing an earlier one: after a refusal, one event
    /// is in flight until the broker takes one, then the whole window again.
    @Test func afterARefusalOneEventIsInFlightUntilTheBrokerTakesOne() {
        var bus = session(window: 3)
        _ = bus.start(at: at(0))
        _ = bus.connected(sessionPresent: false, at: at(0))
        _ = bus.eventsRead([event(1), event(2)], limit: 3, at: at(0))
        _ = bus.acknowledged(.event(1), reason: 0x87, at: at(1))
        // Event 2 was in flight before the refusal: the broker may still take it, but that
        // does not end the caution, and nothing is read while it is in flight.
        #expect(bus.acknowledged(.event(2), reason: 0, at: at(1.01)) == [.delivered([2])])
        let resumed = bus.timerFired(at: at(5))
        #expect(reads(resumed).map(\.0) == [0] && reads(resumed).map(\.1) == [1])
        let probe = bus.eventsRead([event(1)], limit: 1, at: at(5))
        #expect(publishes(probe).map(\.payload) == [Array("e1".utf8)])
        #expect(reads(bus.eventsCommitted(at: at(5.1))).isEmpty) // the probe is in flight
        // Refused again: still one at a time after the next backoff.
        _ = bus.acknowledged(.event(1), reason: 0x87, at: at(5.2))
        var now = at(5.2)
        var again: [BusSession.Action] = []
        while reads(again).isEmpty, now < at(20) {
            now = now + .milliseconds(100)
            again = bus.timerFired(at: now)
        }
        #expect(reads(again).map(\.1) == [1])
        _ = bus.eventsRead([event(1)], limit: 1, at: now)
        // Taken: the window opens again.
        let taken = bus.acknowledged(.event(1), reason: 0, at: now + .milliseconds(10))
        #expect(taken.first == .delivered([1]))
        #expect(reads(taken).map(\.0) == [1] && reads(taken).map(\.1) == [3])
    }

    /// One batch of acknowledgements holds a success (its read of the next event asked for)
    /// and then a refusal: that read's answer is for the stream before the refusal, and is
    /// dropped; the pause's end reads from the start, one event.
    @Test func aReadAnsweredAfterARefusalIsDroppedAndTheStreamGoesOnAfterThePause() {
        var bus = session(window: 2)
        _ = bus.start(at: at(0))
        _ = bus.connected(sessionPresent: false, at: at(0))
        _ = bus.eventsRead([event(1), event(2)], limit: 2, at: at(0))
        let taken = bus.acknowledged(.event(1), reason: 0, at: at(0.1))
        #expect(reads(taken).map(\.0) == [2])
        _ = bus.acknowledged(.event(2), reason: 0x87, at: at(0.1))
        // The old read finds event 3 (or nothing): neither is taken as the stream's.
        #expect(publishes(bus.eventsRead([event(3)], limit: 1, at: at(0.1))).isEmpty)
        #expect(bus.eventsRead([], limit: 1, at: at(0.1)).isEmpty)
        var now = at(0.1)
        var resumed: [BusSession.Action] = []
        while reads(resumed).isEmpty, now < at(10) {
            now = now + .milliseconds(100)
            resumed = bus.timerFired(at: now)
        }
        #expect(reads(resumed).map(\.0) == [0] && reads(resumed).map(\.1) == [1])
        // More than asked for is not published: one in flight.
        #expect(publishes(bus.eventsRead([event(2), event(3)], limit: 1, at: now)).map(\.payload) == [Array("e2".utf8)])
    }

    /// A connection lost with the probe in flight: the next connection still starts with one.
    @Test func theCautionAfterARefusalOutlivesAReconnection() {
        var bus = session(window: 3)
        _ = bus.start(at: at(0))
        _ = bus.connected(sessionPresent: false, at: at(0))
        _ = bus.eventsRead([event(1)], limit: 3, at: at(0))
        _ = bus.acknowledged(.event(1), reason: 0x87, at: at(1))
        _ = bus.connectionLost(.lost("closed"), at: at(1.5))
        var now = at(1.5)
        while !bus.timerFired(at: now).contains(.connect(version5: true)), now < at(10) { now = now + .milliseconds(100) }
        let up = bus.connected(sessionPresent: true, at: now)
        #expect(reads(up).map(\.1) == [1])
    }

    @Test func homeAssistantBirthsRepublishAtMostEveryFiveSeconds() {
        var bus = session()
        _ = bus.setRetained(topics.discovery("u1"), payload: [2], kind: .discovery)
        _ = bus.start(at: at(0))
        _ = bus.connected(sessionPresent: false, at: at(0))
        let birth = bus.received(topic: "homeassistant/status", payload: BusPayloads.online, payloadCount: 6, qos: 1, at: at(10))
        #expect(publishes(birth).map(\.topic) == [topics.discovery("u1")])
        var flood: [BusSession.Action] = []
        for step in 1 ... 100 {
            flood += bus.received(topic: "homeassistant/status", payload: BusPayloads.online, payloadCount: 6, qos: 1, at: at(10 + Double(step) * 0.01))
        }
        #expect(publishes(flood).isEmpty)
        #expect(publishes(bus.timerFired(at: at(15))).map(\.topic) == [topics.discovery("u1")])
    }

    @Test func whatTheDoorDidNotAskForIsRefusedAndCounted() {
        var bus = session()
        _ = bus.start(at: at(0))
        _ = bus.connected(sessionPresent: false, at: at(0))
        #expect(bus.received(topic: "other/topic", payload: Array(repeating: 120, count: 3), payloadCount: 3, qos: 1, at: at(1)) == [.refused(.unexpectedTopic)])
        #expect(bus.received(topic: "homeassistant/status", payload: BusPayloads.online, payloadCount: 6, qos: 2, at: at(1)) == [.refused(.qos2)])
        #expect(bus.received(topic: "homeassistant/status", payload: nil, payloadCount: 1 << 20, qos: 1, at: at(1)) == [.refused(.oversized)])
    }

    @Test func retainedTopicsAreClearedOnceAndHeldOnlyWhileSet() {
        var bus = session()
        _ = bus.setRetained(topics.presence("u1"), payload: [1], kind: .presence)
        #expect(bus.retainedCount == 1)
        _ = bus.setRetained(topics.presence("u1"), payload: nil, kind: .presence)
        #expect(bus.retainedCount == 0)
        _ = bus.start(at: at(0))
        let connected = bus.connected(sessionPresent: false, at: at(0))
        #expect(publishes(connected).filter { $0.topic == topics.presence("u1") }.map(\.payload) == [[]])
        // Cleared once: the next connection does not clear it again.
        _ = bus.connectionLost(.lost("x"), at: at(1))
        _ = bus.timerFired(at: at(3))
        #expect(publishes(bus.connected(sessionPresent: false, at: at(3))).allSatisfy { $0.topic != topics.presence("u1") })
        // The same payload again publishes nothing new.
        _ = bus.setRetained(topics.presence("u2"), payload: [1], kind: .presence)
        #expect(bus.setRetained(topics.presence("u2"), payload: [1], kind: .presence).isEmpty)
    }

    @Test func theStopSaysOfflineThenDisconnects() {
        var bus = session()
        _ = bus.start(at: at(0))
        _ = bus.connected(sessionPresent: false, at: at(0))
        let stop = bus.stop()
        #expect(publishes(stop).map(\.payload) == [BusPayloads.offline])
        #expect(stop.contains(.disconnect))
        #expect(bus.start(at: at(1)) == [.stateChanged(.connecting), .connect(version5: true)])
    }

    func announcements(_ actions: [BusSession.Action]) -> [BusSession.BusAnnouncement] {
        actions.compactMap { if case let .announce(line) = $0 { line } else { nil } }
    }

    @Test func theJournalHearsOfEachChangeOnceAndOfAFlappingSessionOnceUntilItStaysUp() {
        var bus = session()
        var lines: [BusSession.BusAnnouncement] = []
        var now = at(0)
        lines += announcements(bus.start(at: now))
        lines += announcements(bus.connected(sessionPresent: false, at: now))
        // The broker goes away: said once, whatever the retries.
        let gone = BusConnectionFault.lost("closed")
        lines += announcements(bus.connectionLost(gone, at: at(100)))
        for step in 1 ... 5 {
            now = at(100 + 70 * Double(step))
            lines += announcements(bus.timerFired(at: now))
            lines += announcements(bus.connectFailed(.unreachable("refused"), at: now))
        }
        #expect(lines == [.up(sessionPresent: false), .down(gone), .down(.unreachable("refused"))])
        // Back, then dropped at every publish: up, down, then one flapping line.
        lines = []
        let tooLarge = BusConnectionFault.lost("packet too large")
        for round in 0 ..< 6 {
            now = now + .seconds(70)
            lines += announcements(bus.timerFired(at: now))
            lines += announcements(bus.connected(sessionPresent: true, at: now))
            lines += announcements(bus.connectionLost(tooLarge, at: now + .seconds(round + 1)))
            now = now + .seconds(round + 1)
        }
        #expect(lines == [.up(sessionPresent: true), .down(tooLarge), .up(sessionPresent: true), .flapping(tooLarge)])
        // It stays up a minute: said.
        now = now + .seconds(70)
        _ = bus.timerFired(at: now)
        #expect(announcements(bus.connected(sessionPresent: true, at: now)).isEmpty)
        #expect(announcements(bus.timerFired(at: now + .seconds(60))) == [.up(sessionPresent: true)])
    }

    @Test func anEventLargerThanTheBrokerTakesIsADeadLetterAndTheStreamGoesOn() {
        var bus = session(window: 2)
        _ = bus.start(at: at(0))
        _ = bus.connected(sessionPresent: false, at: at(0))
        _ = bus.eventsRead([event(1), event(2)], limit: 2, at: at(0))
        let actions = bus.tooLarge(.event(1), at: at(0.1))
        #expect(actions.prefix(2) == [.refused(.tooLarge(kind: .events)), .undeliverable(1, reason: "larger than the broker's maximum packet size")])
        #expect(reads(actions).map(\.0) == [2])
        #expect(bus.eventsInFlight == 1)
    }

    @Test func sightingsGoOutAtQoS0AndNeighboursComeInButNeverTheDoorsOwnOrAnOversizedOne() {
        var settings = BusSession.Settings(topics: topics, events: false, homeAssistant: false)
        settings.sightings = true
        var bus = BusSession(settings: settings, seed: 1)
        #expect(bus.publishSighting([1, 2, 3]).isEmpty) // not up: dropped
        _ = bus.start(at: at(0))
        #expect(bus.connected(sessionPresent: false, at: at(0)).contains(.subscribe("bg/S/sightings/+", qos: 0)))
        #expect(publishes(bus.publishSighting([1, 2, 3])) == [BusMessage(topic: "bg/S/sightings/G", payload: [1, 2, 3], qos: 0, retain: false, kind: .sightings)])
        #expect(bus.received(topic: "bg/S/sightings/door-2", payload: [9], payloadCount: 1, qos: 0, at: at(1)) == [.sighting(sender: "door-2", payload: [9])])
        #expect(bus.received(topic: "bg/S/sightings/G", payload: [9], payloadCount: 1, qos: 0, at: at(1)).isEmpty)
        #expect(bus.received(topic: "bg/S/sightings/door-2", payload: nil, payloadCount: 100_000, qos: 0, at: at(1)) == [.refused(.oversizedSighting)])
    }

    /// `scan` and `calibrate` read the neighbours' sightings (docs/cli.md): a session that
    /// publishes nothing at all, not even a status, and says nothing at its stop.
    @Test func aListenOnlySessionSubscribesToSightingsAndPublishesNothing() {
        var settings = BusSession.Settings(topics: topics, events: true, homeAssistant: true)
        settings.sightings = true
        settings.listenOnly = true
        var bus = BusSession(settings: settings, seed: 1)
        _ = bus.setRetained(topics.presence("u1"), payload: [1], kind: .presence)
        _ = bus.start(at: at(0))
        let actions = bus.connected(sessionPresent: false, at: at(0.1))
        #expect(publishes(actions).isEmpty)
        #expect(reads(actions).isEmpty)
        #expect(actions.contains(.subscribe("bg/S/sightings/+", qos: 0)))
        #expect(!actions.contains(.subscribe("homeassistant/status", qos: 1)))
        #expect(bus.publishSighting([1, 2, 3]).isEmpty)
        #expect(bus.received(topic: "bg/S/sightings/door-2", payload: [9], payloadCount: 1, qos: 0, at: at(1)) == [.sighting(sender: "door-2", payload: [9])])
        #expect(publishes(bus.stop()).isEmpty)
    }

    @Test func theSenderOfASightingIsTheLastLevelOfItsTopicOnly() {
        #expect(topics.sightingSender("bg/S/sightings/door-2") == "door-2")
        #expect(topics.sightingSender("bg/S/sightings/") == nil)
        #expect(topics.sightingSender("bg/S/sightings/door-2/x") == nil)
        #expect(topics.sightingSender("bg/T/sightings/door-2") == nil)
        #expect(topics.sightingSender("bg/SS/sightings/door-2") == nil)
        #expect(topics.sightingSender("bgx/S/sightings/door-2") == nil)
        #expect(topics.sightingSender("bg/S/sighting/door-2") == nil)
        #expect(topics.sightingSender("bg/S/sightings") == nil)
        #expect(topics.sightingSender("bg/S/G/status") == nil)
        #expect(topics.sightingSender("bg/S/sightings/dör-ü") == "dör-ü")
    }
}
