/// The Bluetooth SIG services this host serves, declared as data (assigned numbers from
/// the SIG's lists), and the database of an enrolment window (docs/gatt-server.md,
/// "Services").
extension GATTServiceDefinition {
    /// The longest device name GAP allows (Core Vol 3 Part C §12.1).
    public static let maxDeviceNameLength = 248

    /// Generic Access (0x1800): Device Name and Appearance, readable by anyone.
    public static func genericAccess(deviceName: String, appearance: UInt16) -> GATTServiceDefinition {
        var appearanceValue = [UInt8]()
        appearanceValue.appendLE(appearance)
        return GATTServiceDefinition(uuid: GATTUUID(uuid16: 0x1800), characteristics: [
            GATTCharacteristicDefinition(uuid: GATTUUID(uuid16: 0x2A00), properties: .read,
                                         value: .fixed(utf8Prefix(deviceName, maxBytes: maxDeviceNameLength))),
            GATTCharacteristicDefinition(uuid: GATTUUID(uuid16: 0x2A01), properties: .read, value: .fixed(appearanceValue)),
        ])
    }

    /// Generic Attribute (0x1801), with Service Changed (indicate; its value the range
    /// 0x0001–0xFFFF) so that a phone that bonded never keeps handles from another mode.
    public static func genericAttribute(serviceChanged: Bool = true) -> GATTServiceDefinition {
        GATTServiceDefinition(uuid: GATTUUID(uuid16: 0x1801), characteristics: serviceChanged ? [
            GATTCharacteristicDefinition(uuid: .serviceChanged, properties: .indicate, value: .fixed([0x01, 0x00, 0xFF, 0xFF])),
        ] : [])
    }

    /// Device Information (0x180A): Manufacturer Name and Model Number strings.
    public static func deviceInformation(manufacturer: String, model: String,
                                         security: GATTSecurityRequirement) -> GATTServiceDefinition {
        GATTServiceDefinition(uuid: GATTUUID(uuid16: 0x180A), characteristics: [
            GATTCharacteristicDefinition(uuid: GATTUUID(uuid16: 0x2A29), properties: .read, security: security,
                                         value: .fixed(utf8Prefix(manufacturer, maxBytes: GATTDatabase.maxValueLength))),
            GATTCharacteristicDefinition(uuid: GATTUUID(uuid16: 0x2A24), properties: .read, security: security,
                                         value: .fixed(utf8Prefix(model, maxBytes: GATTDatabase.maxValueLength))),
        ])
    }

    /// Heart Rate (0x180D): Heart Rate Measurement (notify; values come with each
    /// notification) and Body Sensor Location (read; 0x00, "other").
    public static func heartRate(security: GATTSecurityRequirement) -> GATTServiceDefinition {
        GATTServiceDefinition(uuid: .heartRateService, characteristics: [
            GATTCharacteristicDefinition(uuid: .heartRateMeasurement, properties: .notify, security: security, value: .fixed([])),
            GATTCharacteristicDefinition(uuid: GATTUUID(uuid16: 0x2A38), properties: .read, security: security, value: .fixed([0x00])),
        ])
    }

    /// The longest prefix of `text`'s UTF-8 that ends on a whole character.
    static func utf8Prefix(_ text: String, maxBytes: Int) -> [UInt8] {
        var bytes = [UInt8]()
        for character in text {
            let encoded = Array(String(character).utf8)
            guard bytes.count + encoded.count <= maxBytes else { break }
            bytes.append(contentsOf: encoded)
        }
        return bytes
    }
}

extension GATTDatabase {
    /// Appearance 0x0340, Generic Heart Rate Sensor: what the enrolment window advertises.
    public static let heartRateSensorAppearance: UInt16 = 0x0340

    /// What a phone finds during an enrolment window (docs/pairing.md): GAP and GATT
    /// open, Device Information (manufacturer `beacon-gateway`, model the gateway id) and
    /// Heart Rate needing an encrypted link, so that reading them makes the phone pair.
    public static func enrolment(deviceName: String, gatewayId: String) throws(GATTDatabaseError) -> GATTDatabase {
        try GATTDatabase(services: [
            .genericAccess(deviceName: deviceName, appearance: heartRateSensorAppearance),
            .genericAttribute(),
            .deviceInformation(manufacturer: "beacon-gateway", model: gatewayId, security: .encryption),
            .heartRate(security: .encryption),
        ])
    }
}

extension GATTUUID {
    public static let serviceChanged = GATTUUID(uuid16: 0x2A05)
    public static let heartRateService = GATTUUID(uuid16: 0x180D)
    public static let heartRateMeasurement = GATTUUID(uuid16: 0x2A37)
}
