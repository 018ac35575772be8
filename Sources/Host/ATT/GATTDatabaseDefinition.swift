/// A GATT database declared as data: services, their characteristics (properties,
/// security, value) and descriptors. `GATTDatabase(services:)` turns it into attributes
/// with handles; see docs/gatt-server.md.
public struct GATTServiceDefinition: Hashable, Sendable {
    public var uuid: GATTUUID
    public var isPrimary: Bool
    public var characteristics: [GATTCharacteristicDefinition]

    public init(uuid: GATTUUID, isPrimary: Bool = true, characteristics: [GATTCharacteristicDefinition]) {
        self.uuid = uuid
        self.isPrimary = isPrimary
        self.characteristics = characteristics
    }
}

/// Characteristic properties (Core Vol 3 Part G §3.3.1.1) the server implements.
public struct GATTCharacteristicProperties: OptionSet, Hashable, Sendable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let read = GATTCharacteristicProperties(rawValue: 0x02)
    public static let writeWithoutResponse = GATTCharacteristicProperties(rawValue: 0x04)
    public static let write = GATTCharacteristicProperties(rawValue: 0x08)
    public static let notify = GATTCharacteristicProperties(rawValue: 0x10)
    public static let indicate = GATTCharacteristicProperties(rawValue: 0x20)

    /// Those a definition may use; broadcast, signed writes and extended properties are not served.
    public static let supported: GATTCharacteristicProperties = [.read, .writeWithoutResponse, .write, .notify, .indicate]
}

/// A characteristic value's current content as the server holds it.
public enum GATTStoredValue: Hashable, Sendable {
    case bytes([UInt8])
    /// Reads are refused with this error until the application sets bytes (a value that
    /// does not exist yet, e.g. an answer before its question).
    case unavailable(ATTErrorCode)
}

/// Where a characteristic's value comes from.
public enum GATTValue: Hashable, Sendable {
    /// Never changes.
    case fixed([UInt8])
    /// Held by the server and set by the application (`GATTServer.setValue`), at most
    /// `maxLength` bytes; writes from the central are at most as long too.
    case variable(initial: GATTStoredValue, maxLength: Int)
}

public struct GATTCharacteristicDefinition: Hashable, Sendable {
    public var uuid: GATTUUID
    public var properties: GATTCharacteristicProperties
    /// What the link must have for the value and its client configuration descriptor.
    public var security: GATTSecurityRequirement
    public var value: GATTValue
    /// Read-only descriptors after the value (and after the client characteristic
    /// configuration, which notify or indicate adds on its own).
    public var descriptors: [GATTDescriptorDefinition]

    public init(uuid: GATTUUID, properties: GATTCharacteristicProperties, security: GATTSecurityRequirement = .none,
                value: GATTValue, descriptors: [GATTDescriptorDefinition] = []) {
        self.uuid = uuid
        self.properties = properties
        self.security = security
        self.value = value
        self.descriptors = descriptors
    }
}

/// A read-only descriptor with a fixed value, readable under its characteristic's security.
public struct GATTDescriptorDefinition: Hashable, Sendable {
    public var uuid: GATTUUID
    public var value: [UInt8]

    public init(uuid: GATTUUID, value: [UInt8]) {
        self.uuid = uuid
        self.value = value
    }
}
