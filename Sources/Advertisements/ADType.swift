import HCI

/// The type octet of one advertising-data structure (Core Specification Supplement,
/// part A; numbers from the Assigned Numbers document).
///
/// A thin wrapper rather than an enum so that the many types this gateway does not
/// decode still round-trip and can be counted or shown.
public struct ADType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let flags = ADType(rawValue: 0x01)
    public static let incompleteServiceUUIDs16 = ADType(rawValue: 0x02)
    public static let completeServiceUUIDs16 = ADType(rawValue: 0x03)
    public static let incompleteServiceUUIDs32 = ADType(rawValue: 0x04)
    public static let completeServiceUUIDs32 = ADType(rawValue: 0x05)
    public static let incompleteServiceUUIDs128 = ADType(rawValue: 0x06)
    public static let completeServiceUUIDs128 = ADType(rawValue: 0x07)
    public static let shortenedLocalName = ADType(rawValue: 0x08)
    public static let completeLocalName = ADType(rawValue: 0x09)
    public static let txPowerLevel = ADType(rawValue: 0x0A)
    public static let serviceData16 = ADType(rawValue: 0x16)
    public static let appearance = ADType(rawValue: 0x19)
    public static let serviceData32 = ADType(rawValue: 0x20)
    public static let serviceData128 = ADType(rawValue: 0x21)
    public static let manufacturerSpecificData = ADType(rawValue: 0xFF)

    public var description: String {
        switch self {
        case .flags: "flags"
        case .incompleteServiceUUIDs16, .completeServiceUUIDs16: "16-bit service UUIDs"
        case .incompleteServiceUUIDs32, .completeServiceUUIDs32: "32-bit service UUIDs"
        case .incompleteServiceUUIDs128, .completeServiceUUIDs128: "128-bit service UUIDs"
        case .shortenedLocalName: "shortened local name"
        case .completeLocalName: "complete local name"
        case .txPowerLevel: "TX power level"
        case .serviceData16: "16-bit service data"
        case .appearance: "appearance"
        case .serviceData32: "32-bit service data"
        case .serviceData128: "128-bit service data"
        case .manufacturerSpecificData: "manufacturer specific data"
        default: "AD type 0x\(HexText.lowercase([rawValue]))"
        }
    }
}

/// A company identifier from the Bluetooth SIG's assigned numbers, as carried (little-endian)
/// at the start of manufacturer specific data.
public struct CompanyIdentifier: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    public static let microsoft = CompanyIdentifier(rawValue: 0x0006)
    public static let apple = CompanyIdentifier(rawValue: 0x004C)
    public static let google = CompanyIdentifier(rawValue: 0x00E0)

    public var description: String {
        let number = "0x" + HexText.lowercase([UInt8(truncatingIfNeeded: rawValue >> 8), UInt8(truncatingIfNeeded: rawValue)])
        switch self {
        case .microsoft: return "Microsoft (\(number))"
        case .apple: return "Apple (\(number))"
        case .google: return "Google (\(number))"
        default: return number
        }
    }
}
