/// The H4 packet type indicator: the first byte of every packet on a UART-style link
/// (and on the `tcp:` and user-channel transports, which carry the same framing).
public struct HCIPacketType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue }

    // Inlinable constants, not `static let`s: every packet compares its type with them, and
    // another module reads a `static let` through a call and a once-check.
    @inlinable public static var command: HCIPacketType { HCIPacketType(rawValue: 0x01) }
    @inlinable public static var acl: HCIPacketType { HCIPacketType(rawValue: 0x02) }
    @inlinable public static var sco: HCIPacketType { HCIPacketType(rawValue: 0x03) }
    @inlinable public static var event: HCIPacketType { HCIPacketType(rawValue: 0x04) }
    @inlinable public static var iso: HCIPacketType { HCIPacketType(rawValue: 0x05) }

    public var description: String {
        switch self {
        case .command: "command"
        case .acl: "acl"
        case .sco: "sco"
        case .event: "event"
        case .iso: "iso"
        default: "type(0x\(String(rawValue, radix: 16)))"
        }
    }
}

/// One HCI packet: its type and its bytes as the Core specification lays them out
/// (header and parameters, without the H4 indicator byte).
public struct HCIPacket: Hashable, Sendable {
    public var type: HCIPacketType
    public var payload: [UInt8]

    public init(type: HCIPacketType, payload: [UInt8]) {
        self.type = type
        self.payload = payload
    }

    /// The packet as it travels over H4: indicator byte, then payload.
    public var h4Bytes: [UInt8] {
        var bytes = [UInt8]()
        bytes.reserveCapacity(payload.count + 1)
        bytes.append(type.rawValue)
        bytes.append(contentsOf: payload)
        return bytes
    }
}
