import HCI

/// The Packet_Boundary_Flag of an HCI ACL data packet (Core Vol 4 Part E §5.4.2).
public struct ACLPacketBoundary: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue & 0b11 }

    /// Host to controller: the first fragment of a non-flushable L2CAP PDU (what LE uses).
    public static let firstNonFlushable = ACLPacketBoundary(rawValue: 0b00)
    /// A continuation fragment, either direction.
    public static let continuing = ACLPacketBoundary(rawValue: 0b01)
    /// Controller to host: the first fragment of an L2CAP PDU.
    public static let firstFlushable = ACLPacketBoundary(rawValue: 0b10)
    /// A complete automatically flushable PDU (BR/EDR only; LE controllers must not send it).
    public static let completeFlushable = ACLPacketBoundary(rawValue: 0b11)

    /// Whether this fragment opens a new L2CAP PDU.
    public var startsPDU: Bool { self != .continuing }

    public var description: String {
        switch self {
        case .firstNonFlushable: "first-non-flushable"
        case .continuing: "continuing"
        case .firstFlushable: "first-flushable"
        default: "complete-flushable"
        }
    }
}

/// The 4-byte header of an HCI ACL data packet: handle (12 bits), boundary and
/// broadcast flags (2 bits each), data length.
public struct ACLDataHeader: Hashable, Sendable {
    /// Connection handles are 0x000–0xEFF; larger values are reserved.
    public static let maxConnectionHandle: UInt16 = 0x0EFF
    public static let size = 4

    public var connectionHandle: UInt16
    public var boundary: ACLPacketBoundary
    public var broadcast: UInt8
    public var dataLength: UInt16

    public init(connectionHandle: UInt16, boundary: ACLPacketBoundary, broadcast: UInt8 = 0, dataLength: UInt16) {
        self.connectionHandle = connectionHandle & 0x0FFF
        self.boundary = boundary
        self.broadcast = broadcast & 0b11
        self.dataLength = dataLength
    }

    /// Splits an ACL packet's payload into header and data; the length must match exactly.
    public static func decode(_ payload: [UInt8]) throws(ACLDataError) -> (ACLDataHeader, ArraySlice<UInt8>) {
        var reader = HCIByteReader(payload, context: .aboveHCI)
        guard let first = try? reader.u16(), let length = try? reader.u16() else { throw .truncatedHeader(payload.count) }
        guard reader.remaining == Int(length) else {
            throw .lengthMismatch(declared: Int(length), actual: reader.remaining)
        }
        let header = ACLDataHeader(connectionHandle: first & 0x0FFF,
                                   boundary: ACLPacketBoundary(rawValue: UInt8(truncatingIfNeeded: first >> 12)),
                                   broadcast: UInt8(truncatingIfNeeded: first >> 14), dataLength: length)
        return (header, reader.rest())
    }

    /// An ACL packet with this header and `data` (whose count sets the length).
    public static func packet(handle: UInt16, boundary: ACLPacketBoundary, data: ArraySlice<UInt8>) -> HCIPacket {
        var payload = [UInt8]()
        payload.reserveCapacity(size + data.count)
        payload.appendLE((handle & 0x0FFF) | UInt16(boundary.rawValue) << 12)
        payload.appendLE(UInt16(truncatingIfNeeded: data.count))
        payload.append(contentsOf: data)
        return HCIPacket(type: .acl, payload: payload)
    }
}

/// Why incoming ACL data was dropped. Each is counted; none is fatal to the link.
public enum ACLDataError: Error, Hashable, Sendable, CustomStringConvertible {
    case truncatedHeader(Int)
    case lengthMismatch(declared: Int, actual: Int)
    /// Data for a handle with no open connection.
    case unknownConnection(UInt16)
    /// A continuation fragment with no PDU started.
    case continuationWithoutStart(UInt16)
    /// A new PDU started before the previous one was complete (the partial one is dropped).
    case interruptedPDU(UInt16)
    /// The L2CAP length exceeds what this host accepts.
    case oversizedPDU(handle: UInt16, length: Int)
    /// More bytes arrived than the L2CAP header announced.
    case overlongPDU(UInt16)
    /// A packet type other than ACL.
    case notACL

    public var description: String {
        switch self {
        case .truncatedHeader(let count): "ACL packet of \(count) bytes has no complete header"
        case .lengthMismatch(let declared, let actual): "ACL length \(declared) but \(actual) bytes"
        case .unknownConnection(let handle): "ACL data for unknown handle 0x" + String(handle, radix: 16)
        case .continuationWithoutStart(let handle): "continuation without start on 0x" + String(handle, radix: 16)
        case .interruptedPDU(let handle): "PDU on 0x" + String(handle, radix: 16) + " interrupted by a new start"
        case .oversizedPDU(let handle, let length): "L2CAP PDU of \(length) bytes on 0x" + String(handle, radix: 16) + " exceeds the limit"
        case .overlongPDU(let handle): "fragments on 0x" + String(handle, radix: 16) + " exceed the L2CAP length"
        case .notACL: "not an ACL packet"
        }
    }
}
