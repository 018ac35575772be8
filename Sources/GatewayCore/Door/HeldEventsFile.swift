import AttendanceEvents
import BluetoothCrypto
import HCI

/// The file that carries decisions the store refused over a stop (docs/reliability.md,
/// "Held over a restart"): the events with everything their bodies are rendered from
/// (id, idempotency key, timestamps: the server dedupes by key and nothing is decided
/// again), and the presence records that go with them, as the one transaction the store
/// would have taken. Bound to the database it belongs to, so a file left by another
/// agent is never replayed into this one.
///
/// Pure bytes in and out: the driver reads and writes the file. A file that is damaged,
/// truncated, too large or built to hurt is refused with the reason; its length bounds
/// the work and memory of reading it.
public struct HeldEventsFile: Hashable, Sendable {
    /// Far above what a door can hold (a thousand check-ins and one checkout per open
    /// visit, each a few hundred bytes, plus a record per person).
    public static let maximumBytes = 32 << 20
    static let maximumString = 4096
    static let maximumRecord = 1 << 16
    static let maximumRSSISeries = 4096
    static let magic: [UInt8] = Array("BGHE".utf8)
    static let version: UInt8 = 1
    /// Version 2 adds each event's `movedTo` (docs/neighbours.md); written only when an
    /// event has one, so a door without neighbours writes the files it always wrote.
    static let versionWithMoves: UInt8 = 2

    /// The database these events belong to (`Store.path` of the state directory).
    public var databasePath: String
    public var batch: DoorCommitBatch

    public init(databasePath: String, batch: DoorCommitBatch) {
        self.databasePath = databasePath
        self.batch = batch
    }

    /// The stored presence records with this file's laid over them: while its events
    /// wait for the store, presence is restored as they left it, so their persons are
    /// not decided a second time (a second check-in under another key).
    public func laidOver(_ stored: [String: [UInt8]]) -> [String: [UInt8]] {
        var records = stored
        for record in batch.records {
            switch record {
            case let .save(key, bytes): records[key] = bytes
            case let .delete(key): records[key] = nil
            }
        }
        return records
    }

    public struct DecodingError: Error, Hashable, Sendable, CustomStringConvertible {
        public var reason: String
        public var description: String { reason }
    }

    // MARK: Writing

    public func encode() -> [UInt8] {
        var out = Writer()
        out.bytes += Self.magic
        let version = batch.events.contains { $0.movedTo != nil } ? Self.versionWithMoves : Self.version
        out.version = version
        out.bytes.append(version)
        out.string(databasePath)
        out.count(batch.events.count)
        for event in batch.events { out.event(event) }
        out.count(batch.records.count)
        for record in batch.records {
            switch record {
            case let .save(key, bytes):
                out.bytes.append(1)
                out.string(key)
                out.count(bytes.count)
                out.bytes += bytes
            case let .delete(key):
                out.bytes.append(2)
                out.string(key)
            }
        }
        // A digest of all the above: a torn or damaged file is refused, not half used.
        out.bytes += SHA256.hash(out.bytes)
        return out.bytes
    }

    // MARK: Reading

    public init(decoding bytes: [UInt8]) throws(DecodingError) {
        guard bytes.count <= Self.maximumBytes else {
            throw DecodingError(reason: "\(bytes.count) bytes, more than the \(Self.maximumBytes) a held-events file may have")
        }
        guard bytes.count >= Self.magic.count + 1 + SHA256.byteCount, bytes.starts(with: Self.magic) else {
            throw DecodingError(reason: "not a held-events file")
        }
        let version = bytes[Self.magic.count]
        guard version == Self.version || version == Self.versionWithMoves else {
            throw DecodingError(reason: "held-events file version \(version), expected \(Self.version) or \(Self.versionWithMoves)")
        }
        let bodyEnd = bytes.count - SHA256.byteCount
        guard SHA256.hash(Array(bytes[..<bodyEnd])) == Array(bytes[bodyEnd...]) else {
            throw DecodingError(reason: "its digest does not match its content (damaged or cut short)")
        }
        var reader = Reader(bytes: bytes, offset: Self.magic.count + 1, end: bodyEnd, version: version)
        databasePath = try reader.string("the database path")
        var events: [AttendanceEvent] = []
        let eventCount = try reader.count("events")
        events.reserveCapacity(min(eventCount, reader.remaining))
        for index in 0 ..< eventCount { events.append(try reader.event(index)) }
        var records: [DoorRecordWrite] = []
        let recordCount = try reader.count("records")
        records.reserveCapacity(min(recordCount, reader.remaining))
        for index in 0 ..< recordCount {
            let kind = try reader.byte("record \(index)")
            let key = try reader.string("record \(index)'s key")
            switch kind {
            case 1:
                let length = try reader.count("record \(index)'s length")
                guard length <= Self.maximumRecord else { throw DecodingError(reason: "record \(index) is \(length) bytes long") }
                records.append(.save(key: key, record: try reader.take(length, "record \(index)")))
            case 2:
                records.append(.delete(key: key))
            default:
                throw DecodingError(reason: "record \(index) is of unknown kind \(kind)")
            }
        }
        guard reader.remaining == 0 else { throw DecodingError(reason: "\(reader.remaining) bytes after the last record") }
        batch = DoorCommitBatch(events: events, records: records)
    }
}

extension DoorCommitBatch {
    /// This batch, then `newer` (decided after it): the events in order, and for each
    /// record key the newer write.
    public func followed(by newer: DoorCommitBatch) -> DoorCommitBatch {
        let replaced = Set(newer.records.map(\.key))
        return DoorCommitBatch(events: events + newer.events,
                               records: records.filter { !replaced.contains($0.key) } + newer.records)
    }
}

// MARK: - Encoding

private struct Writer {
    var bytes: [UInt8] = []
    var version = HeldEventsFile.version

    mutating func integer(_ value: Int64) {
        let raw = UInt64(bitPattern: value)
        for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: raw >> UInt64(shift))) }
    }

    mutating func count(_ value: Int) {
        let raw = UInt32(clamping: value)
        for shift in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8(truncatingIfNeeded: raw >> UInt32(shift))) }
    }

    /// Whole: the configuration and the server's roster keep every string within
    /// `maximumString`, and a cut one would break its event's key.
    mutating func string(_ value: String) {
        count(value.utf8.count)
        bytes += value.utf8
    }

    mutating func optionalString(_ value: String?) {
        bytes.append(value == nil ? 0 : 1)
        if let value { string(value) }
    }

    mutating func event(_ event: AttendanceEvent) {
        string(event.id)
        string(event.idempotencyKey)
        string(event.type.rawValue)
        string(event.userId)
        string(event.gateway.id)
        optionalString(event.gateway.site)
        optionalString(event.gateway.door)
        integer(event.timestampMilliseconds)
        integer(event.decidedAtMilliseconds)
        integer(event.visitStartMilliseconds)
        string(event.beacon.tag)
        integer(Int64(bitPattern: event.beacon.address.rawValue))
        switch event.beacon.identity {
        case nil:
            bytes.append(0)
        case let .iBeacon(uuid, major, minor)?:
            bytes.append(1)
            string(uuid)
            integer(Int64(major))
            integer(Int64(minor))
        case let .eddystoneUID(namespace, instance)?:
            bytes.append(2)
            string(namespace)
            string(instance)
        }
        count(event.rssiSeries.count)
        for rssi in event.rssiSeries { integer(Int64(rssi)) }
        bytes.append(event.txPower == nil ? 0 : 1)
        if let txPower = event.txPower { integer(Int64(txPower)) }
        if let handshake = event.handshake {
            bytes.append(handshake.ok ? 2 : 1)
            integer(Int64(handshake.roundTripMilliseconds))
        } else {
            bytes.append(0)
        }
        string(event.appVersion)
        bytes.append(event.clockSynced ? 1 : 0)
        if version >= HeldEventsFile.versionWithMoves { optionalString(event.movedTo) }
    }
}

// MARK: - Decoding

private struct Reader {
    typealias Failure = HeldEventsFile.DecodingError
    let bytes: [UInt8]
    var offset: Int
    let end: Int
    let version: UInt8

    var remaining: Int { end - offset }

    mutating func take(_ length: Int, _ what: String) throws(Failure) -> [UInt8] {
        guard length >= 0, length <= remaining else { throw Failure(reason: "cut short in \(what)") }
        defer { offset += length }
        return Array(bytes[offset ..< offset + length])
    }

    mutating func byte(_ what: String) throws(Failure) -> UInt8 {
        try take(1, what)[0]
    }

    mutating func integer(_ what: String) throws(Failure) -> Int64 {
        let raw = try take(8, what)
        var value: UInt64 = 0
        for index in 0 ..< 8 { value |= UInt64(raw[index]) << UInt64(8 * index) }
        return Int64(bitPattern: value)
    }

    /// A count or length: never more than the bytes left could hold, so no loop or
    /// allocation is driven by a number the file merely states.
    mutating func count(_ what: String) throws(Failure) -> Int {
        let raw = try take(4, what)
        let value = Int(raw[0]) | Int(raw[1]) << 8 | Int(raw[2]) << 16 | Int(raw[3]) << 24
        guard value <= remaining else { throw Failure(reason: "\(what): \(value), more than the file holds") }
        return value
    }

    mutating func string(_ what: String) throws(Failure) -> String {
        let length = try count(what)
        guard length <= HeldEventsFile.maximumString else { throw Failure(reason: "\(what) is \(length) bytes long") }
        let utf8 = try take(length, what)
        let text = String(decoding: utf8, as: UTF8.self)
        guard text.utf8.elementsEqual(utf8) else { throw Failure(reason: "\(what) is not UTF-8") }
        return text
    }

    mutating func optionalString(_ what: String) throws(Failure) -> String? {
        switch try byte(what) {
        case 0: return nil
        case 1: return try string(what)
        case let flag: throw Failure(reason: "\(what): unknown flag \(flag)")
        }
    }

    /// An `Int` field (RSSI, tx power, a round trip, a major or minor): within ±2^31.
    mutating func small(_ what: String) throws(Failure) -> Int {
        let value = try integer(what)
        guard value >= Int64(Int32.min), value <= Int64(Int32.max) else { throw Failure(reason: "\(what) out of range") }
        return Int(value)
    }

    mutating func event(_ index: Int) throws(Failure) -> AttendanceEvent {
        let what = "event \(index)"
        let id = try string(what + "'s id")
        let key = try string(what + "'s idempotency key")
        let type = AttendanceEventType(rawValue: try string(what + "'s type"))
        guard type == .checkin || type == .checkout || type == .spoofSuspected else {
            throw Failure(reason: "\(what) has an unknown type")
        }
        let userId = try string(what + "'s person")
        let gateway = GatewayIdentity(id: try string(what + "'s gateway"), site: try optionalString(what + "'s site"),
                                      door: try optionalString(what + "'s door"))
        let timestamp = try integer(what + "'s timestamp")
        let decidedAt = try integer(what + "'s decision time")
        let visitStart = try integer(what + "'s visit start")
        let tag = try string(what + "'s tag")
        let address = BluetoothAddress(rawValue: UInt64(bitPattern: try integer(what + "'s address")))
        let identity: BeaconInfo.Identity?
        switch try byte(what + "'s beacon identity") {
        case 0:
            identity = nil
        case 1:
            identity = .iBeacon(uuid: try string(what + "'s uuid"), major: try small(what + "'s major"),
                                minor: try small(what + "'s minor"))
        case 2:
            identity = .eddystoneUID(namespace: try string(what + "'s namespace"), instance: try string(what + "'s instance"))
        case let kind:
            throw Failure(reason: "\(what) has an unknown beacon identity \(kind)")
        }
        let rssiCount = try count(what + "'s RSSI series")
        guard rssiCount <= HeldEventsFile.maximumRSSISeries else { throw Failure(reason: "\(what)'s RSSI series is too long") }
        var rssiSeries: [Int] = []
        rssiSeries.reserveCapacity(rssiCount)
        for _ in 0 ..< rssiCount { rssiSeries.append(try small(what + "'s RSSI")) }
        let txPower: Int? = switch try byte(what + "'s tx power") {
        case 0: nil
        case 1: try small(what + "'s tx power")
        default: throw Failure(reason: "\(what)'s tx power has an unknown flag")
        }
        let handshake: AttendanceEvent.Handshake? = switch try byte(what + "'s handshake") {
        case 0: nil
        case 1: .init(ok: false, roundTripMilliseconds: try small(what + "'s round trip"))
        case 2: .init(ok: true, roundTripMilliseconds: try small(what + "'s round trip"))
        default: throw Failure(reason: "\(what)'s handshake has an unknown flag")
        }
        let appVersion = try string(what + "'s version")
        let clockSynced: Bool = switch try byte(what + "'s clock flag") {
        case 0: false
        case 1: true
        default: throw Failure(reason: "\(what)'s clock flag is neither 0 nor 1")
        }
        var event = AttendanceEvent(id: id, sequence: 0, type: type, userId: userId, gateway: gateway,
                                    timestampMilliseconds: timestamp, decidedAtMilliseconds: decidedAt,
                                    visitStartMilliseconds: visitStart,
                                    beacon: BeaconInfo(tag: tag, address: address, identity: identity),
                                    rssiSeries: rssiSeries, txPower: txPower, handshake: handshake, appVersion: appVersion)
        event.clockSynced = clockSynced
        if version >= HeldEventsFile.versionWithMoves { event.movedTo = try optionalString(what + "'s move") }
        // The key is what the server dedupes by: it must be the one its event's fields make.
        guard event.idempotencyKey == key else { throw Failure(reason: "\(what)'s idempotency key does not match its fields") }
        return event
    }
}
