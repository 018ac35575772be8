/// The btsnoop capture format (as written by Android, BlueZ's btmon and this agent's
/// `--capture`), read by Wireshark and tshark.
///
/// File: 16-byte header ("btsnoop\0", version 1, datalink), then records of a 24-byte
/// big-endian header (original length, included length, flags, cumulative drops,
/// timestamp in microseconds since 0000-01-01) followed by the packet bytes.
public enum BTSnoop {
    public static let magic: [UInt8] = Array("btsnoop".utf8) + [0]
    public static let version: UInt32 = 1
    public static let headerLength = 16
    public static let recordHeaderLength = 24
    /// Microseconds between 0000-01-01 (btsnoop's epoch) and 1970-01-01.
    public static let unixEpochOffsetMicroseconds: Int64 = 0x00DC_DDB3_0F2F_8000

    /// Which framing the records' packet bytes use.
    public struct Datalink: RawRepresentable, Hashable, Sendable {
        public var rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }
        /// Un-encapsulated HCI: no indicator byte; the flags say command/event vs data.
        public static let h1 = Datalink(rawValue: 1001)
        /// HCI UART (H4): each record starts with the H4 indicator byte.
        public static let h4 = Datalink(rawValue: 1002)
    }

    public enum Direction: Sendable, Hashable {
        case hostToController
        case controllerToHost
    }

    public struct Record: Sendable, Hashable {
        public var direction: Direction
        public var packet: HCIPacket
        /// Microseconds since the Unix epoch.
        public var timestampMicroseconds: Int64

        public init(direction: Direction, packet: HCIPacket, timestampMicroseconds: Int64) {
            self.direction = direction
            self.packet = packet
            self.timestampMicroseconds = timestampMicroseconds
        }
    }

    public enum FormatError: Error, Hashable, Sendable {
        case notBTSnoop
        case unsupportedVersion(UInt32)
        case unsupportedDatalink(UInt32)
        /// A record whose lengths cannot be right; reading stops there.
        case corruptRecord(offset: Int)
    }

    /// The file header for an H4 capture.
    public static func fileHeader(datalink: Datalink = .h4) -> [UInt8] {
        var bytes = magic
        bytes.appendBigEndian(version)
        bytes.appendBigEndian(datalink.rawValue)
        return bytes
    }

    /// One record in H4 datalink framing.
    public static func encodeRecord(_ record: Record) -> [UInt8] {
        let data = record.packet.h4Bytes
        var bytes = [UInt8]()
        bytes.reserveCapacity(recordHeaderLength + data.count)
        bytes.appendBigEndian(UInt32(data.count))
        bytes.appendBigEndian(UInt32(data.count))
        var flags: UInt32 = record.direction == .controllerToHost ? 1 : 0
        if record.packet.type == .command || record.packet.type == .event { flags |= 2 }
        bytes.appendBigEndian(flags)
        bytes.appendBigEndian(UInt32(0))
        bytes.appendBigEndian(UInt64(bitPattern: record.timestampMicroseconds &+ unixEpochOffsetMicroseconds))
        bytes.append(contentsOf: data)
        return bytes
    }
}

/// Reads btsnoop records from bytes that arrive in chunks of any size.
public struct BTSnoopParser: Sendable {
    public private(set) var datalink: BTSnoop.Datalink?
    private var buffer: [UInt8] = []
    private var readIndex = 0
    private var consumed = 0
    /// Records above this size are corruption (no HCI packet is this large).
    public static let maximumRecordLength = 65_536 + 5

    public init() {}

    public mutating func append<Bytes: Sequence>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        if readIndex > 0 && readIndex >= buffer.count / 2 {
            buffer.removeFirst(readIndex)
            readIndex = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// The next record, or `nil` when more bytes are needed.
    public mutating func nextRecord() throws(BTSnoop.FormatError) -> BTSnoop.Record? {
        if datalink == nil {
            guard buffer.count - readIndex >= BTSnoop.headerLength else { return nil }
            guard Array(buffer[readIndex ..< readIndex + 8]) == BTSnoop.magic else { throw .notBTSnoop }
            let version = buffer.readBigEndianUInt32(at: readIndex + 8)
            guard version == BTSnoop.version else { throw .unsupportedVersion(version) }
            let link = BTSnoop.Datalink(rawValue: buffer.readBigEndianUInt32(at: readIndex + 12))
            guard link == .h4 || link == .h1 else { throw .unsupportedDatalink(link.rawValue) }
            datalink = link
            readIndex += BTSnoop.headerLength
            consumed += BTSnoop.headerLength
        }
        let available = buffer.count - readIndex
        guard available >= BTSnoop.recordHeaderLength else { return nil }
        let included = Int(buffer.readBigEndianUInt32(at: readIndex + 4))
        guard included >= 1, included <= BTSnoopParser.maximumRecordLength else {
            throw .corruptRecord(offset: consumed)
        }
        guard available >= BTSnoop.recordHeaderLength + included else { return nil }
        let flags = buffer.readBigEndianUInt32(at: readIndex + 8)
        let timestamp = Int64(bitPattern: buffer.readBigEndianUInt64(at: readIndex + 16)) &- BTSnoop.unixEpochOffsetMicroseconds
        let start = readIndex + BTSnoop.recordHeaderLength
        let direction: BTSnoop.Direction = flags & 1 == 1 ? .controllerToHost : .hostToController
        let packet: HCIPacket
        if datalink == .h4 {
            packet = HCIPacket(type: HCIPacketType(rawValue: buffer[start]), payload: Array(buffer[start + 1 ..< start + included]))
        } else {
            let isCommandOrEvent = flags & 2 == 2
            let type: HCIPacketType = isCommandOrEvent ? (direction == .controllerToHost ? .event : .command) : .acl
            packet = HCIPacket(type: type, payload: Array(buffer[start ..< start + included]))
        }
        readIndex = start + included
        consumed += BTSnoop.recordHeaderLength + included
        return BTSnoop.Record(direction: direction, packet: packet, timestampMicroseconds: timestamp)
    }
}

extension [UInt8] {
    @inlinable mutating func appendBigEndian(_ value: UInt32) {
        append(UInt8(truncatingIfNeeded: value >> 24))
        append(UInt8(truncatingIfNeeded: value >> 16))
        append(UInt8(truncatingIfNeeded: value >> 8))
        append(UInt8(truncatingIfNeeded: value))
    }

    @inlinable mutating func appendBigEndian(_ value: UInt64) {
        appendBigEndian(UInt32(truncatingIfNeeded: value >> 32))
        appendBigEndian(UInt32(truncatingIfNeeded: value))
    }

    @inlinable func readBigEndianUInt32(at index: Int) -> UInt32 {
        UInt32(self[index]) << 24 | UInt32(self[index + 1]) << 16 | UInt32(self[index + 2]) << 8 | UInt32(self[index + 3])
    }

    @inlinable func readBigEndianUInt64(at index: Int) -> UInt64 {
        UInt64(readBigEndianUInt32(at: index)) << 32 | UInt64(readBigEndianUInt32(at: index + 4))
    }
}
