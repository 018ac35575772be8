/// A GATT attribute type: a 16-bit Bluetooth SIG UUID or a full 128-bit one.
///
/// Kept as 16 bytes most significant first (the way UUIDs are written); ATT carries
/// UUIDs little-endian, and 16-bit ones stand for `0000xxxx-0000-1000-8000-00805f9b34fb`.
public struct GATTUUID: Hashable, Sendable, CustomStringConvertible {
    public let bytes: [UInt8]

    static let baseUUID: [UInt8] = [0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10, 0x00,
                                    0x80, 0x00, 0x00, 0x80, 0x5F, 0x9B, 0x34, 0xFB]

    /// Nil unless exactly 16 bytes.
    public init?(bytes: [UInt8]) {
        guard bytes.count == 16 else { return nil }
        self.bytes = bytes
    }

    private init(unchecked bytes: [UInt8]) { self.bytes = bytes }

    public init(uuid16: UInt16) {
        var bytes = Self.baseUUID
        bytes[2] = UInt8(truncatingIfNeeded: uuid16 >> 8)
        bytes[3] = UInt8(truncatingIfNeeded: uuid16)
        self.bytes = bytes
    }

    /// From ATT's little-endian form: 2 or 16 bytes.
    init?(littleEndian: ArraySlice<UInt8>) {
        switch littleEndian.count {
        case 2: self.init(uuid16: UInt16(littleEndian[littleEndian.startIndex]) | UInt16(littleEndian[littleEndian.startIndex + 1]) << 8)
        case 16: self.init(unchecked: littleEndian.reversed())
        default: return nil
        }
    }

    /// The 16-bit alias when this is a SIG UUID on the base.
    public var uuid16: UInt16? {
        guard bytes[0] == 0, bytes[1] == 0, bytes[4...] == Self.baseUUID[4...] else { return nil }
        return UInt16(bytes[2]) << 8 | UInt16(bytes[3])
    }

    /// The shortest form ATT allows, little-endian.
    public var attBytes: [UInt8] {
        if let short = uuid16 { return [UInt8(truncatingIfNeeded: short), UInt8(truncatingIfNeeded: short >> 8)] }
        return bytes.reversed()
    }

    public static let primaryService = GATTUUID(uuid16: 0x2800)
    public static let secondaryService = GATTUUID(uuid16: 0x2801)
    public static let characteristic = GATTUUID(uuid16: 0x2803)
    public static let clientCharacteristicConfiguration = GATTUUID(uuid16: 0x2902)

    public var description: String {
        let digits = Array("0123456789abcdef")
        var text = ""
        for (index, byte) in bytes.enumerated() {
            if [4, 6, 8, 10].contains(index) { text.append("-") }
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return text
    }
}

/// The handles a service spans.
public struct GATTHandleRange: Hashable, Sendable {
    public var start: UInt16
    public var end: UInt16
    public init(start: UInt16, end: UInt16) {
        self.start = start
        self.end = end
    }
}

/// A characteristic declaration as discovery found it.
public struct GATTCharacteristic: Hashable, Sendable {
    public var declarationHandle: UInt16
    public var properties: UInt8
    public var valueHandle: UInt16
    public var uuid: GATTUUID

    public init(declarationHandle: UInt16, properties: UInt8, valueHandle: UInt16, uuid: GATTUUID) {
        self.declarationHandle = declarationHandle
        self.properties = properties
        self.valueHandle = valueHandle
        self.uuid = uuid
    }
}
