/// The event code of an HCI event packet.
public struct EventCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let disconnectionComplete = EventCode(rawValue: 0x05)
    public static let encryptionChange = EventCode(rawValue: 0x08)
    /// Inlinable: compared with every packet's event code.
    @inlinable public static var commandComplete: EventCode { EventCode(rawValue: 0x0E) }
    /// Inlinable: compared with every packet's event code.
    @inlinable public static var commandStatus: EventCode { EventCode(rawValue: 0x0F) }
    public static let hardwareError = EventCode(rawValue: 0x10)
    public static let numberOfCompletedPackets = EventCode(rawValue: 0x13)
    public static let dataBufferOverflow = EventCode(rawValue: 0x1A)
    public static let encryptionKeyRefreshComplete = EventCode(rawValue: 0x30)
    /// Encryption Change v2: v1 plus the key size (sent only when page 2 of the event mask asks).
    public static let encryptionChangeV2 = EventCode(rawValue: 0x59)
    /// Inlinable: compared with every packet's event code.
    @inlinable public static var leMeta: EventCode { EventCode(rawValue: 0x3E) }

    public var description: String { "event(0x" + String(rawValue, radix: 16) + ")" }
}

/// The subevent code that follows an LE Meta event's code.
public struct LESubeventCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let connectionComplete = LESubeventCode(rawValue: 0x01)
    public static let advertisingReport = LESubeventCode(rawValue: 0x02)
    public static let connectionUpdateComplete = LESubeventCode(rawValue: 0x03)
    public static let readRemoteFeaturesComplete = LESubeventCode(rawValue: 0x04)
    public static let longTermKeyRequest = LESubeventCode(rawValue: 0x05)
    public static let remoteConnectionParameterRequest = LESubeventCode(rawValue: 0x06)
    public static let dataLengthChange = LESubeventCode(rawValue: 0x07)
    public static let enhancedConnectionComplete = LESubeventCode(rawValue: 0x0A)
    public static let directedAdvertisingReport = LESubeventCode(rawValue: 0x0B)
    public static let phyUpdateComplete = LESubeventCode(rawValue: 0x0C)
    public static let extendedAdvertisingReport = LESubeventCode(rawValue: 0x0D)
    public static let scanTimeout = LESubeventCode(rawValue: 0x11)
    public static let advertisingSetTerminated = LESubeventCode(rawValue: 0x12)
    public static let scanRequestReceived = LESubeventCode(rawValue: 0x13)
    public static let channelSelectionAlgorithm = LESubeventCode(rawValue: 0x14)
    public static let enhancedConnectionCompleteV2 = LESubeventCode(rawValue: 0x29)

    /// The bit of this subevent in the LE Set Event Mask command: subevent n is bit n − 1.
    public var eventMaskBit: UInt64 {
        rawValue == 0 || rawValue > 64 ? 0 : 1 << UInt64(rawValue - 1)
    }

    public var description: String { "le-subevent(0x" + String(rawValue, radix: 16) + ")" }
}
