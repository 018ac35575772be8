// LE encryption as the peripheral: answering the controller's LE Long Term Key Request
// (Core Vol 4 Part E 7.8.25, 7.8.26). Used by enrolment's pairing (docs/pairing.md).

/// A 128-bit key as HCI carries it: least significant octet first. Its description,
/// debug description and mirror show no octet, so a logged or dumped command never
/// prints the key.
public struct LongTermKeyOctets: Hashable, Sendable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable, HCIFieldValue {
    public static let count = 16
    /// Least significant octet first, exactly `count` octets.
    public let leastSignificantFirst: [UInt8]

    /// `nil` unless `octets` holds exactly 16 octets.
    public init?(leastSignificantFirst octets: [UInt8]) {
        guard octets.count == Self.count else { return nil }
        leastSignificantFirst = octets
    }

    public var description: String { "<128-bit key>" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }

    public static var codec: HCIFieldCodec<Self> {
        HCIFieldCodec(write: { value, bytes in bytes.append(contentsOf: value.leastSignificantFirst) },
                      read: { (reader: inout HCIByteReader) throws(HCIDecodingError) in
                          Self(unchecked: Array(try reader.slice(count)))
                      })
    }

    private init(unchecked octets: [UInt8]) { leastSignificantFirst = octets }

    /// All zero: the value field layouts start from.
    public static let zero = Self(unchecked: [UInt8](repeating: 0, count: count))
}

/// LE Long Term Key Request Reply: the key that encrypts the link.
public struct LELongTermKeyRequestReplyCommand: HCICommand, HCIFieldLayout {
    public static let opcode = Opcode.leLongTermKeyRequestReply
    public static let expectedResponse = HCIExpectedResponse.commandComplete(returnParametersLength: 3)
    public static var fields: [HCIField<Self>] { [.field(\.connectionHandle, .connectionHandle), .field(\.longTermKey)] }
    public var connectionHandle: UInt16 = 0
    public var longTermKey = LongTermKeyOctets.zero

    public init() {}

    public init(connectionHandle: UInt16, longTermKey: LongTermKeyOctets) {
        self.connectionHandle = connectionHandle
        self.longTermKey = longTermKey
    }
}

/// LE Long Term Key Request Negative Reply: no key for this request; the controller
/// refuses the central's encryption.
public struct LELongTermKeyRequestNegativeReplyCommand: HCICommand, HCIFieldLayout {
    public static let opcode = Opcode.leLongTermKeyRequestNegativeReply
    public static let expectedResponse = HCIExpectedResponse.commandComplete(returnParametersLength: 3)
    public static var fields: [HCIField<Self>] { [.field(\.connectionHandle, .connectionHandle)] }
    public var connectionHandle: UInt16 = 0

    public init() {}
    public init(connectionHandle: UInt16) { self.connectionHandle = connectionHandle }
}

/// The return parameters of both replies: status and the connection handle.
public protocol LELongTermKeyRequestAnswerReturn: HCIReturnParameters, HCIFieldLayout {
    var status: HCIStatus { get set }
    var connectionHandle: UInt16 { get set }
}

extension LELongTermKeyRequestAnswerReturn {
    public static var fields: [HCIField<Self>] { [.field(\.status), .field(\.connectionHandle, .connectionHandle)] }

    public init(status: HCIStatus = .success, connectionHandle: UInt16) {
        self.init()
        self.status = status
        self.connectionHandle = connectionHandle
    }
}

public struct LELongTermKeyRequestReplyReturn: LELongTermKeyRequestAnswerReturn {
    public static let opcode = Opcode.leLongTermKeyRequestReply
    public var status = HCIStatus.success
    public var connectionHandle: UInt16 = 0
    public init() {}
}

public struct LELongTermKeyRequestNegativeReplyReturn: LELongTermKeyRequestAnswerReturn {
    public static let opcode = Opcode.leLongTermKeyRequestNegativeReply
    public var status = HCIStatus.success
    public var connectionHandle: UInt16 = 0
    public init() {}
}
