/// Why the framer dropped bytes. Every case is counted; none stops the stream.
public enum H4FramingError: Error, Hashable, Sendable {
    /// A byte that is not a known packet indicator where a packet should start: skipped.
    case unknownPacketType(UInt8)
    /// A header announced a payload longer than any controller sends: the indicator is skipped.
    case oversizedPacket(type: HCIPacketType, length: Int)
}

/// Splits an H4 byte stream into packets, correct under any split of the stream:
/// bytes may arrive one at a time or many packets at once.
///
/// Garbage resynchronises byte by byte: an unknown indicator or an impossible length
/// skips one byte and is reported, so a corrupted stream costs packets, never the
/// connection, and memory stays bounded by `maximumPayloadLength`.
public struct H4Framer: Sendable {
    /// ACL payloads above this are treated as corruption. LE controllers send at most
    /// 251 + 4 bytes; BR/EDR ones up to 1021. The bound keeps memory flat under garbage.
    public let maximumPayloadLength: Int

    private var buffer: [UInt8] = []
    private var readIndex = 0

    public init(maximumPayloadLength: Int = 4096) {
        self.maximumPayloadLength = maximumPayloadLength
        buffer.reserveCapacity(4096)
    }

    /// Bytes received but not yet part of a returned packet.
    public var bufferedByteCount: Int { buffer.count - readIndex }

    public mutating func append<Bytes: Sequence>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        if readIndex > 0 && readIndex >= buffer.count / 2 {
            buffer.removeFirst(readIndex)
            readIndex = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// Drops everything buffered: after the transport is reopened a half packet is meaningless.
    public mutating func reset() {
        buffer.removeAll(keepingCapacity: true)
        readIndex = 0
    }

    /// The next complete packet, `nil` when more bytes are needed.
    ///
    /// Throws when it skipped a byte; call again to continue with the rest of the buffer.
    public mutating func nextPacket() throws(H4FramingError) -> HCIPacket? {
        guard let (type, range) = try nextFrame() else { return nil }
        let packet = HCIPacket(type: type, payload: Array(buffer[range]))
        readIndex = range.upperBound
        return packet
    }

    /// What `offerNextPacket` did.
    public enum Offer: Sendable {
        /// More bytes are needed.
        case needMoreBytes
        /// `take` took the packet: it is consumed.
        case taken
        /// `take` declined it: it stays next, for `nextPacket`.
        case declined
    }

    /// Offers the next complete packet to `take` read in place from the framer's buffer
    /// (valid only during the call): no copy and no allocation. A packet taken is consumed;
    /// one declined stays next.
    ///
    /// Throws when it skipped a byte; call again to continue with the rest of the buffer.
    public mutating func offerNextPacket(
        to take: (HCIPacketType, UnsafeBufferPointer<UInt8>) -> Bool
    ) throws(H4FramingError) -> Offer {
        guard let (type, range) = try nextFrame() else { return .needMoreBytes }
        let taken = buffer.withUnsafeBufferPointer { take(type, UnsafeBufferPointer(rebasing: $0[range])) }
        guard taken else { return .declined }
        readIndex = range.upperBound
        return .taken
    }

    /// The type and payload bytes of the next complete packet, not yet consumed; `nil` when
    /// more bytes are needed. Skips (and throws for) a byte that cannot start a packet.
    private mutating func nextFrame() throws(H4FramingError) -> (HCIPacketType, Range<Int>)? {
        let available = buffer.count - readIndex
        guard available >= 1 else { return nil }
        let type = HCIPacketType(rawValue: buffer[readIndex])
        let headerLength: Int
        switch type {
        case .command, .sco: headerLength = 3
        case .event: headerLength = 2
        case .acl, .iso: headerLength = 4
        default:
            readIndex += 1
            throw .unknownPacketType(type.rawValue)
        }
        guard available >= 1 + headerLength else { return nil }
        let h = readIndex + 1
        let payloadLength: Int
        switch type {
        case .command, .sco: payloadLength = Int(buffer[h + 2])
        case .event: payloadLength = Int(buffer[h + 1])
        case .acl: payloadLength = Int(buffer[h + 2]) | Int(buffer[h + 3]) << 8
        default: payloadLength = (Int(buffer[h + 2]) | Int(buffer[h + 3]) << 8) & 0x3FFF
        }
        if payloadLength > maximumPayloadLength {
            readIndex += 1
            throw .oversizedPacket(type: type, length: payloadLength)
        }
        let total = headerLength + payloadLength
        guard available >= 1 + total else { return nil }
        return (type, h ..< h + total)
    }
}
