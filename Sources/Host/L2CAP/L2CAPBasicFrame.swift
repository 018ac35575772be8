import HCI

/// The channel identifier of an L2CAP basic frame. LE uses fixed channels only here.
public struct L2CAPChannelID: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    public static let attribute = L2CAPChannelID(rawValue: 0x0004)
    public static let leSignalling = L2CAPChannelID(rawValue: 0x0005)
    public static let securityManager = L2CAPChannelID(rawValue: 0x0006)

    public var description: String {
        switch self {
        case .attribute: "ATT"
        case .leSignalling: "LE-signalling"
        case .securityManager: "SMP"
        default: "CID 0x" + String(rawValue, radix: 16)
        }
    }
}

/// One L2CAP PDU in basic mode: length and channel, then the payload.
public struct L2CAPBasicFrame: Hashable, Sendable {
    public static let headerSize = 4

    public var connectionHandle: UInt16
    public var channel: L2CAPChannelID
    public var payload: [UInt8]

    public init(connectionHandle: UInt16, channel: L2CAPChannelID, payload: [UInt8]) {
        self.connectionHandle = connectionHandle
        self.channel = channel
        self.payload = payload
    }

    /// The PDU's bytes, header included, as they go into ACL fragments.
    public var bytes: [UInt8] {
        var bytes = [UInt8]()
        bytes.reserveCapacity(Self.headerSize + payload.count)
        bytes.appendLE(UInt16(truncatingIfNeeded: payload.count))
        bytes.appendLE(channel.rawValue)
        bytes.append(contentsOf: payload)
        return bytes
    }
}
