/// The attributes of a declared database, with their handles: assigned from 0x0001 in
/// declaration order, so the same definition always gives the same handles. Per
/// service: its declaration, then per characteristic its declaration, its value, its
/// client characteristic configuration (when it notifies or indicates), its other
/// descriptors. See docs/gatt-server.md.
public struct GATTDatabase: Hashable, Sendable {
    /// The largest attribute value ATT allows (Core Vol 3 Part F §3.2.9).
    public static let maxValueLength = 512

    public let attributes: [GATTAttribute]

    public init(services: [GATTServiceDefinition]) throws(GATTDatabaseError) {
        var attributes = [GATTAttribute]()
        func nextHandle() throws(GATTDatabaseError) -> UInt16 {
            guard attributes.count < Int(UInt16.max) else { throw .tooManyAttributes }
            return UInt16(attributes.count + 1)
        }
        for service in services {
            let serviceIndex = attributes.count
            attributes.append(GATTAttribute(handle: try nextHandle(), type: service.isPrimary ? .primaryService : .secondaryService,
                                            readAccess: .open, kind: .service(end: 0, value: service.uuid.attBytes)))
            for characteristic in service.characteristics {
                guard GATTCharacteristicProperties.supported.isSuperset(of: characteristic.properties) else {
                    throw .unsupportedProperties(characteristic.uuid)
                }
                switch characteristic.value {
                case .fixed(let bytes):
                    guard bytes.count <= Self.maxValueLength else { throw .valueTooLong(characteristic.uuid) }
                case .variable(let initial, let maxLength):
                    guard maxLength >= 0, maxLength <= Self.maxValueLength else { throw .valueTooLong(characteristic.uuid) }
                    if case .bytes(let bytes) = initial, bytes.count > maxLength { throw .valueTooLong(characteristic.uuid) }
                }
                let declaration = try nextHandle()
                let valueHandle = declaration &+ 1
                var declarationValue = [characteristic.properties.rawValue]
                declarationValue.appendLE(valueHandle)
                declarationValue.append(contentsOf: characteristic.uuid.attBytes)
                attributes.append(GATTAttribute(handle: declaration, type: .characteristic, readAccess: .open,
                                                kind: .characteristicDeclaration(declarationValue)))
                let properties = characteristic.properties
                let writable = !properties.isDisjoint(with: [.write, .writeWithoutResponse])
                let configured = !properties.isDisjoint(with: [.notify, .indicate])
                let configurationHandle: UInt16? = configured ? valueHandle &+ 1 : nil
                attributes.append(GATTAttribute(
                    handle: try nextHandle(), type: characteristic.uuid,
                    readAccess: properties.contains(.read) ? .required(characteristic.security) : .notPermitted,
                    writeAccess: writable ? .required(characteristic.security) : .notPermitted,
                    kind: .value(characteristic.value, properties: properties, security: characteristic.security,
                                 configurationHandle: configurationHandle)
                ))
                if configured {
                    attributes.append(GATTAttribute(
                        handle: try nextHandle(), type: .clientCharacteristicConfiguration,
                        readAccess: .required(characteristic.security), writeAccess: .required(characteristic.security),
                        kind: .clientConfiguration(valueHandle: valueHandle, properties: properties)
                    ))
                }
                for descriptor in characteristic.descriptors {
                    guard descriptor.value.count <= Self.maxValueLength else { throw .valueTooLong(descriptor.uuid) }
                    guard descriptor.uuid != .clientCharacteristicConfiguration, descriptor.uuid != .characteristic,
                          descriptor.uuid != .primaryService, descriptor.uuid != .secondaryService else {
                        throw .reservedDescriptor(descriptor.uuid)
                    }
                    attributes.append(GATTAttribute(handle: try nextHandle(), type: descriptor.uuid,
                                                    readAccess: .required(characteristic.security), kind: .descriptor(descriptor.value)))
                }
            }
            let end = UInt16(attributes.count)
            attributes[serviceIndex].kind = .service(end: end, value: service.uuid.attBytes)
        }
        self.attributes = attributes
    }

    public var lastHandle: UInt16 { UInt16(attributes.count) }

    public func attribute(_ handle: UInt16) -> GATTAttribute? {
        guard handle >= 1, Int(handle) <= attributes.count else { return nil }
        return attributes[Int(handle) - 1]
    }

    /// The value handle of the first characteristic `characteristic` in the first service `service`.
    public func valueHandle(service: GATTUUID, characteristic: GATTUUID) -> UInt16? {
        guard let declaration = attributes.first(where: { $0.isService && $0.serviceUUID == service }),
              case .service(let end, _) = declaration.kind else { return nil }
        return attributes.first { attribute in
            attribute.handle > declaration.handle && attribute.handle <= end && attribute.type == characteristic
                && { if case .value = attribute.kind { true } else { false } }()
        }?.handle
    }
}

/// One attribute: its handle, type, who may read and write it, and what it is.
public struct GATTAttribute: Hashable, Sendable {
    public enum Access: Hashable, Sendable {
        case notPermitted
        case required(GATTSecurityRequirement)

        public static let open = Access.required(.none)
    }

    public enum Kind: Hashable, Sendable {
        /// A service declaration: the service's last handle and its UUID in ATT form.
        case service(end: UInt16, value: [UInt8])
        /// Properties, value handle and UUID in ATT form.
        case characteristicDeclaration([UInt8])
        case value(GATTValue, properties: GATTCharacteristicProperties, security: GATTSecurityRequirement, configurationHandle: UInt16?)
        /// Its value is per connection, in the server.
        case clientConfiguration(valueHandle: UInt16, properties: GATTCharacteristicProperties)
        case descriptor([UInt8])
    }

    public let handle: UInt16
    public let type: GATTUUID
    public let readAccess: Access
    public let writeAccess: Access
    public internal(set) var kind: Kind

    init(handle: UInt16, type: GATTUUID, readAccess: Access, writeAccess: Access = .notPermitted, kind: Kind) {
        self.handle = handle
        self.type = type
        self.readAccess = readAccess
        self.writeAccess = writeAccess
        self.kind = kind
    }

    public var isService: Bool { type == .primaryService || type == .secondaryService }

    var serviceUUID: GATTUUID? {
        guard case .service(_, let value) = kind else { return nil }
        return GATTUUID(littleEndian: value[...])
    }
}

public enum GATTDatabaseError: Error, Hashable, Sendable, CustomStringConvertible {
    /// More than 65,535 attributes.
    case tooManyAttributes
    /// A value (or its maximum) longer than ATT's 512 bytes.
    case valueTooLong(GATTUUID)
    /// Broadcast, signed writes or extended properties: not served.
    case unsupportedProperties(GATTUUID)
    /// A descriptor with a type the server declares itself.
    case reservedDescriptor(GATTUUID)

    public var description: String {
        switch self {
        case .tooManyAttributes: "more than 65535 attributes"
        case .valueTooLong(let uuid): "value of \(uuid) longer than \(GATTDatabase.maxValueLength) bytes"
        case .unsupportedProperties(let uuid): "characteristic \(uuid) has properties the server does not serve"
        case .reservedDescriptor(let uuid): "descriptor type \(uuid) is declared by the server itself"
        }
    }
}
