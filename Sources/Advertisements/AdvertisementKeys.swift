/// The few things tag matching needs from one report's advertising data, extracted in
/// one allocation-free pass: the iBeacon, the Eddystone-UID, the TX power level and what
/// was malformed. This is the per-report hot path; `AdvertisementSummary` is the full,
/// allocating decode kept for display.
public struct AdvertisementKeys: Hashable, Sendable {
    public var iBeacon: IBeacon?
    public var eddystoneUID: EddystoneUID?
    /// Ranging TX power of the Eddystone-UID frame (calibrated at 0 m).
    public var eddystoneTxPower: Int8?
    /// The TX Power Level AD structure (0x0A).
    public var txPowerLevel: Int8?
    public var malformations: ADMalformations = []

    public init() {}

    public init(scanning data: ArraySlice<UInt8>) {
        // Walked through a raw buffer: slicing an ArraySlice per structure retains and
        // releases its storage, a large share of this function's cost
        // (docs/benchmarks.md, "Why the live path is cheap").
        data.withUnsafeBufferPointer { scan($0) }
    }

    /// As `init(scanning:)` for bytes read in place (`LEAdvertisingReportView.data`).
    public init(scanning bytes: UnsafeBufferPointer<UInt8>) {
        scan(bytes)
    }

    private mutating func scan(_ bytes: UnsafeBufferPointer<UInt8>) {
        var index = 0
        let end = bytes.count
        while index < end {
            let length = Int(bytes[index])
            // Zero length: the Core spec's early end of the data (and legacy padding).
            guard length > 0 else { return }
            let valueEnd = index + 1 + length
            guard valueEnd <= end else {
                malformations.insert(.lengthPastEnd)
                return
            }
            let type = ADType(rawValue: bytes[index + 1])
            // Within bounds: index + 2 ≤ valueEnd ≤ end.
            let value = UnsafeBufferPointer(rebasing: bytes[(index + 2) ..< valueEnd])
            index = valueEnd
            guard ADStructure.lengthIsValid(type: type, count: value.count) else {
                malformations.insert(.invalidFieldLength)
                continue
            }
            switch type {
            case .manufacturerSpecificData where iBeacon == nil:
                switch IBeacon.decode(manufacturerBytes: value) {
                case let .iBeacon(beacon): iBeacon = beacon
                case .truncated: malformations.insert(.truncatedIBeacon)
                case .notIBeacon: break
                }
            case .serviceData16 where eddystoneUID == nil:
                // Only the UID frame matters for matching; the other frames are left to
                // the full decode so that the hot path never builds a String.
                guard value.uint16LE(at: 0) == 0xFEAA, value.byte(at: 2) == EddystoneFrame.FrameType.uid.rawValue
                else { break }
                let frame = UnsafeBufferPointer(rebasing: value[2...])
                if let uid = EddystoneUID(frame: frame), let power = frame.byte(at: 1) {
                    eddystoneUID = uid
                    eddystoneTxPower = Int8(bitPattern: power)
                } else {
                    malformations.insert(.truncatedEddystone)
                }
            case .txPowerLevel:
                txPowerLevel = value.first.map { Int8(bitPattern: $0) }
            default:
                break
            }
        }
    }

    public init(scanning data: [UInt8]) { self.init(scanning: data[...]) }
}

extension ADStructure {
    /// Whether a value of `count` bytes is a valid length for `type` (types not decoded
    /// here are always valid).
    static func lengthIsValid(type: ADType, count: Int) -> Bool {
        switch type {
        case .flags: count >= 1
        case .incompleteServiceUUIDs16, .completeServiceUUIDs16: count % 2 == 0
        case .incompleteServiceUUIDs32, .completeServiceUUIDs32: count % 4 == 0
        case .incompleteServiceUUIDs128, .completeServiceUUIDs128: count % 16 == 0
        case .txPowerLevel: count == 1
        case .appearance: count == 2
        case .serviceData16, .manufacturerSpecificData: count >= 2
        case .serviceData32: count >= 4
        case .serviceData128: count >= 16
        default: true
        }
    }
}
