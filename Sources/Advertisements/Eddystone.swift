import HCI

/// Eddystone frames, carried as 16-bit service data for UUID 0xFEAA
/// (github.com/google/eddystone, protocol-specification.md).
public enum EddystoneFrame: Hashable, Sendable {
    /// 0x00: 10-byte namespace and 6-byte instance; `txPower` is calibrated at 0 m.
    case uid(EddystoneUID, txPower: Int8)
    /// 0x10: a compressed URL, expanded to text.
    case url(String, txPower: Int8)
    /// 0x20 version 0x00: unencrypted telemetry.
    case tlm(EddystoneTLM)
    /// 0x20 version 0x01: encrypted telemetry; opaque here.
    case encryptedTLM
    /// 0x30: ephemeral identifier (8 bytes), opaque without the beacon's key.
    case eid(UInt64, txPower: Int8)
    /// A frame type this gateway does not know.
    case unknown(frameType: UInt8)

    public struct FrameType: RawRepresentable, Hashable, Sendable {
        public var rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }

        public static let uid = FrameType(rawValue: 0x00)
        public static let url = FrameType(rawValue: 0x10)
        public static let tlm = FrameType(rawValue: 0x20)
        public static let eid = FrameType(rawValue: 0x30)
    }

    /// Frame type (1) + TX power (1) + namespace (10) + instance (6); the 2 reserved bytes
    /// that follow are often left out, so they are not required.
    static let uidLength = 18
    /// Frame type, version, battery (2), temperature (2), advertising count (4), seconds (4).
    static let tlmLength = 14
    static let eidLength = 10
    /// Frame type, TX power, scheme: the shortest URL frame.
    static let urlMinimumLength = 3

    public enum DecodeResult: Sendable {
        case frame(EddystoneFrame)
        case truncated
    }

    /// Decodes the service data following the 0xFEAA UUID.
    public static func decode(serviceData frame: ArraySlice<UInt8>) -> DecodeResult {
        guard let type = frame.byte(at: 0).map(FrameType.init(rawValue:)) else { return .truncated }
        switch type {
        case .uid:
            guard let uid = EddystoneUID(frame: frame), let power = frame.byte(at: 1) else { return .truncated }
            return .frame(.uid(uid, txPower: Int8(bitPattern: power)))
        case .url:
            guard frame.count >= urlMinimumLength, let power = frame.byte(at: 1),
                  let url = EddystoneURL.expand(frame.dropFirst(2))
            else { return .truncated }
            return .frame(.url(url, txPower: Int8(bitPattern: power)))
        case .tlm:
            switch frame.byte(at: 1) {
            case 0x00:
                guard let tlm = EddystoneTLM(frame: frame) else { return .truncated }
                return .frame(.tlm(tlm))
            case nil: return .truncated
            default: return .frame(.encryptedTLM)
            }
        case .eid:
            guard frame.count >= eidLength, let power = frame.byte(at: 1),
                  let eid = frame.uintBE(at: 2, count: 8)
            else { return .truncated }
            return .frame(.eid(eid, txPower: Int8(bitPattern: power)))
        default:
            return .frame(.unknown(frameType: type.rawValue))
        }
    }
}

/// An Eddystone-UID beacon id: namespace (10 bytes) and instance (6 bytes), packed into
/// two integers for matching.
public struct EddystoneUID: Hashable, Sendable, CustomStringConvertible {
    /// The 10 namespace bytes, most significant first, in the low 80 bits of (high, low):
    /// `namespaceHigh` holds the first 2 bytes, `namespaceLow` the next 8.
    public var namespaceHigh: UInt16
    public var namespaceLow: UInt64
    /// The 6 instance bytes, most significant first.
    public var instance: UInt64

    public init?(namespace: some Collection<UInt8>, instance: some Collection<UInt8>) {
        guard namespace.count == 10, instance.count == 6 else { return nil }
        let ns = ArraySlice(namespace)
        let inst = ArraySlice(instance)
        guard let high = ns.uint16BE(at: 0), let low = ns.uintBE(at: 2, count: 8),
              let id = inst.uintBE(at: 0, count: 6)
        else { return nil }
        namespaceHigh = high
        namespaceLow = low
        self.instance = id
    }

    /// From the fields as stored (`instance` in its low 48 bits).
    init(namespaceHigh: UInt16, namespaceLow: UInt64, instance: UInt64) {
        self.namespaceHigh = namespaceHigh
        self.namespaceLow = namespaceLow
        self.instance = instance
    }

    /// From a UID frame (frame type and TX power first).
    @inline(__always)
    init?<Bytes: RandomAccessCollection>(frame: Bytes) where Bytes.Element == UInt8, Bytes.Index == Int {
        guard frame.count >= EddystoneFrame.uidLength,
              let high = frame.uint16BE(at: 2), let low = frame.uintBE(at: 4, count: 8),
              let id = frame.uintBE(at: 12, count: 6)
        else { return nil }
        self.init(namespaceHigh: high, namespaceLow: low, instance: id)
    }

    public var namespaceBytes: [UInt8] {
        [UInt8(truncatingIfNeeded: namespaceHigh >> 8), UInt8(truncatingIfNeeded: namespaceHigh)]
            + (0 ..< 8).map { UInt8(truncatingIfNeeded: namespaceLow >> (8 * UInt64(7 - $0))) }
    }

    public var instanceBytes: [UInt8] {
        (0 ..< 6).map { UInt8(truncatingIfNeeded: instance >> (8 * UInt64(5 - $0))) }
    }

    /// Configuration form `NAMESPACE:INSTANCE` in hex, as docs/identities.md writes it.
    public var description: String { "\(HexText.lowercase(namespaceBytes)):\(HexText.lowercase(instanceBytes))" }
}

/// Unencrypted Eddystone telemetry (TLM version 0x00).
public struct EddystoneTLM: Hashable, Sendable {
    /// Battery voltage in mV; 0 when the beacon is not battery powered.
    public var batteryMillivolts: UInt16
    /// Beacon temperature in 1/256 °C (signed 8.8 fixed point); nil when not supported (0x8000).
    public var temperatureRaw: Int16?
    /// Advertising PDUs sent since power-on or reboot.
    public var advertisementCount: UInt32
    /// Time since power-on or reboot, in 0.1 s.
    public var uptimeDeciseconds: UInt32

    public var temperatureCelsius: Double? { temperatureRaw.map { Double($0) / 256 } }

    init?(frame: ArraySlice<UInt8>) {
        guard frame.count >= EddystoneFrame.tlmLength,
              let battery = frame.uint16BE(at: 2), let temperature = frame.uint16BE(at: 4),
              let count = frame.uint32BE(at: 6), let seconds = frame.uint32BE(at: 10)
        else { return nil }
        batteryMillivolts = battery
        temperatureRaw = temperature == 0x8000 ? nil : Int16(bitPattern: temperature)
        advertisementCount = count
        uptimeDeciseconds = seconds
    }
}

/// The URL compression of Eddystone-URL frames.
enum EddystoneURL {
    static let schemes = ["http://www.", "https://www.", "http://", "https://"]
    static let expansions = [
        ".com/", ".org/", ".edu/", ".net/", ".info/", ".biz/", ".gov/",
        ".com", ".org", ".edu", ".net", ".info", ".biz", ".gov",
    ]

    /// Scheme prefix byte, then URL bytes in which 0x00…0x0D stand for common endings.
    /// Nil for an unknown scheme; other bytes outside printable ASCII are replaced, since
    /// the text only ever goes to a display.
    static func expand(_ encoded: ArraySlice<UInt8>) -> String? {
        guard let schemeByte = encoded.first, Int(schemeByte) < schemes.count else { return nil }
        var text = schemes[Int(schemeByte)]
        for byte in encoded.dropFirst() {
            if Int(byte) < expansions.count {
                text += expansions[Int(byte)]
            } else if byte > 0x20, byte < 0x7F {
                text.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                text += "\u{FFFD}"
            }
        }
        return text
    }
}
