import Advertisements
import AttendanceEvents
import EventLoop
@testable import HCI
import XCTest
@testable import GatewayCore
import PresenceProof

/// A store that keeps what a driver would put in SQLite, and can be told to refuse.
struct FakeDoorStore {
    var events: [AttendanceEvent] = []
    var records: [String: [UInt8]] = [:]
    var nextSequence: Int64 = 1
    var keys: Set<String> = []
    /// Every commit and checkpoint fails while set (an I/O error, or the outbox at its cap).
    var refusing: DoorStoreFailure?
    var commitAttempts = 0
    var checkpoints = 0
    /// Whether each checkpoint waited for the disk, in order.
    var durability: [Bool] = []
    /// The records a power cut leaves: as of the last write that waited for the disk (a
    /// commit, or a durable checkpoint; either makes the relaxed writes before it durable
    /// too, as SQLite's WAL does). `records` is what `kill -9` leaves.
    var durableRecords: [String: [UInt8]] = [:]

    mutating func commit(_ batch: DoorCommitBatch) -> DoorCommitResult {
        commitAttempts += 1
        if let refusing { return .failed(refusing) }
        var sequences: [Int64?] = []
        for event in batch.events {
            guard keys.insert(event.idempotencyKey).inserted else {
                sequences.append(nil)
                continue
            }
            var numbered = event
            numbered.sequence = nextSequence
            nextSequence += 1
            events.append(numbered)
            sequences.append(numbered.sequence)
        }
        write(batch.records)
        durableRecords = records
        return .committed(sequences: sequences)
    }

    mutating func save(_ checkpoint: DoorCheckpoint) -> String? {
        if let refusing, !refusing.outboxFull { return refusing.message }
        checkpoints += 1
        durability.append(checkpoint.durable)
        write(checkpoint.records)
        if checkpoint.durable { durableRecords = records }
        return nil
    }

    mutating func write(_ writes: [DoorRecordWrite]) {
        for write in writes {
            switch write {
            case let .save(key, record): records[key] = record
            case let .delete(key): records[key] = nil
            }
        }
    }

    func record(_ personId: String) -> PersistedPresence? {
        records[personId].flatMap(PersistedPresence.init(decoding:))
    }

    func events(_ type: AttendanceEventType) -> [AttendanceEvent] { events.filter { $0.type == type } }
}

/// Drives a `DoorCore` as `GatewayAgent` does, in virtual time: every action performed
/// in order, the store's answers fed back, the one timer followed.
struct DoorHarness {
    var core: DoorCore
    var store = FakeDoorStore()
    var now = Instant(nanoseconds: 1_000_000_000)
    var wall: Int64 = 1_789_012_345_678
    var synchronised = true
    var timer: Instant?
    var logs: [DoorLogLine] = []
    var wanted: [Int: ConnectPeer] = [:]
    var proofsStarted: [DoorProofStart] = []
    var disconnected: [UInt16] = []
    var indications: [DoorIndication] = []
    /// Timer firings so far.
    var ticks = 0
    /// Signed sighting reports the core asked to publish, oldest first, and when.
    var published: [[UInt8]] = []
    var publishedAt: [Instant] = []

    static let anchorWall: Int64 = 1_789_012_345_678

    /// `count` persons `p0…`, each with one tag `t0…` at a fixed address (index = number).
    static func setup(persons count: Int, settings: PresenceSettings = DoorHarness.settings, requireProof: Set<Int> = [],
                      tracked: Set<Int> = [], withKey: Bool = true) -> DoorSetup {
        var persons: [PresencePerson] = []
        var tags: [ConfiguredTag] = []
        var connectionTags: [Int: DoorConnectionTag] = [:]
        for n in 0 ..< count {
            persons.append(PresencePerson(id: "p\(n)", requireProof: requireProof.contains(n), tags: [PresenceTag(index: n, id: "t\(n)")]))
            tags.append(ConfiguredTag(tagId: "t\(n)", personId: "p\(n)", identities: [.address(address(n))]))
            if requireProof.contains(n) || tracked.contains(n) {
                connectionTags[n] = DoorConnectionTag(
                    tagId: "t\(n)", personId: "p\(n)", requireProof: requireProof.contains(n), tracked: tracked.contains(n),
                    key: withKey ? TagKey(bytes: Array(repeating: UInt8(n & 0xFF), count: TagKey.byteCount)) : nil,
                    configuredPeer: ConnectPeer(address: address(n), addressType: .publicDevice))
            }
        }
        return DoorSetup(gateway: GatewayIdentity(id: "door-1"), appVersion: "test", settings: settings, persons: persons,
                         tags: tags, connectionTags: connectionTags)
    }

    /// enter −70, exit −75, window 3 s, 2 samples, lost 10 s, leave 180 s, away 60 s.
    static let settings = PresenceSettings()

    static func address(_ n: Int) -> BluetoothAddress { BluetoothAddress(rawValue: 0x00_1B_DC_00_00_00 | UInt64(n)) }

    /// `synchronised`: what the kernel says at the restore (the core is built assuming it is,
    /// as the agent builds it before it reads the clock). `restoring: false`: the store could
    /// not be opened at start, so nothing is restored (yet). `scanning: false`: the
    /// controller is not up yet (`core.scanningStarted` is the test's to give); else it
    /// comes up right after the restore, as the agent's does.
    init(_ setup: DoorSetup, stored: [String: [UInt8]] = [:], store: FakeDoorStore = FakeDoorStore(), synchronised: Bool = true,
         restoring: Bool = true, scanning: Bool = true, now: Instant = Instant(nanoseconds: 1_000_000_000),
         wall: Int64 = DoorHarness.anchorWall) {
        self.now = now
        self.wall = wall
        core = DoorCore(setup: setup, now: now, clock: WallClockReading(wallMilliseconds: wall, synchronised: true))
        self.store = store
        self.synchronised = synchronised
        if restoring { perform(core.restore(stored: stored, at: now, clock: clock)) }
        if scanning { perform(core.scanningStarted(at: now)) }
    }

    var clock: WallClockReading { WallClockReading(wallMilliseconds: wall, synchronised: synchronised) }

    mutating func perform(_ actions: [DoorAction]) {
        for action in actions {
            switch action {
            case let .commit(batch):
                let result = store.commit(batch)
                perform(core.commitFinished(result, at: now))
            case let .checkpoint(checkpoint):
                let error = store.save(checkpoint)
                perform(core.checkpointFinished(error: error, at: now))
            case let .want(tagIndex, peer, _): wanted[tagIndex] = peer
            case let .unwant(tagIndex): wanted[tagIndex] = nil
            case let .startProof(start): proofsStarted.append(start)
            case let .disconnect(handle): disconnected.append(handle)
            case let .log(line): logs.append(line)
            case let .indicate(indication): indications.append(indication)
            case let .armTimer(deadline): timer = deadline
            case let .publishSightings(payload):
                published.append(payload)
                publishedAt.append(now)
            }
        }
    }

    /// Moves virtual time (monotonic and wall together), firing the timer on the way.
    mutating func advance(by duration: Duration) {
        let target = now + duration
        while let deadline = timer, deadline <= target {
            move(to: max(deadline, now))
            timer = nil
            ticks += 1
            perform(core.tick(at: now, clock: clock))
        }
        move(to: target)
    }

    mutating func advance(seconds: Double) { advance(by: .milliseconds(Int64((seconds * 1000).rounded()))) }

    private mutating func move(to instant: Instant) {
        wall += (instant - now).nanosecondsClamped / 1_000_000
        now = instant
    }

    /// One batch of one report from person `n`'s tag.
    mutating func hear(_ n: Int, rssi: Int) { hear([n], rssi: rssi) }

    /// One batch (as the driver gathers them) of one report from each of these persons' tags.
    mutating func hear(_ persons: [Int], rssi: Int) {
        // As the driver does: the time only (the synchronisation is read at the timer).
        perform(core.beginReports(at: now, clock: WallClockReading(wallMilliseconds: wall, synchronised: nil)))
        let data: [UInt8] = [0x02, 0x01, 0x06]
        for n in persons {
            let actions = data.withUnsafeBufferPointer { buffer in
                core.report(LEAdvertisingReportView(properties: [], dataStatus: .complete, addressType: .publicDevice,
                                                    address: Self.address(n), txPower: nil, rssi: Int8(rssi), data: buffer), at: now)
            }
            if !actions.isEmpty { perform(actions) }
        }
        perform(core.endReports(at: now))
    }

    /// Person `n` heard every second for `seconds` at `rssi`.
    mutating func stay(_ n: Int, rssi: Int = -60, seconds: Int) {
        for _ in 0 ..< seconds {
            hear(n, rssi: rssi)
            advance(seconds: 1)
        }
    }

    func state(_ n: Int) -> PresenceState? { core.presence.state(of: "p\(n)") }

    func logged(_ message: String) -> [DoorLogLine] { logs.filter { $0.message == message } }
}
