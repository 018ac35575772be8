import HCI

/// A 128-bit UUID as two integers, most significant half first, so it hashes and
/// compares in two words: it is part of the iBeacon and Eddystone-UID match keys.
public struct UUID128: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var high: UInt64
    public var low: UInt64

    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// From 16 bytes most significant first (iBeacon UUIDs, text form, configuration).
    /// Nil unless exactly 16 bytes.
    public init?(bigEndianBytes bytes: some Collection<UInt8>) {
        guard bytes.count == 16 else { return nil }
        var high: UInt64 = 0
        var low: UInt64 = 0
        for (i, byte) in bytes.enumerated() {
            if i < 8 { high = high << 8 | UInt64(byte) } else { low = low << 8 | UInt64(byte) }
        }
        self.init(high: high, low: low)
    }

    /// From 16 bytes least significant first, as 128-bit UUIDs travel in AD structures.
    public init?(littleEndianBytes bytes: some Collection<UInt8>) {
        guard bytes.count == 16 else { return nil }
        self.init(bigEndianBytes: bytes.reversed())
    }

    /// The 16 bytes most significant first.
    public var bigEndianBytes: [UInt8] {
        (0 ..< 16).map { i in
            let word = i < 8 ? high : low
            return UInt8(truncatingIfNeeded: word >> (8 * UInt64(7 - i % 8)))
        }
    }

    public static func < (lhs: UUID128, rhs: UUID128) -> Bool {
        (lhs.high, lhs.low) < (rhs.high, rhs.low)
    }

    /// Lower-case `8-4-4-4-12`, the form configuration files and `scan` use.
    public var description: String { TagIdentity.formatUUID(bigEndianBytes) }

    /// The Bluetooth base UUID 00000000-0000-1000-8000-00805F9B34FB, into which 16- and
    /// 32-bit UUIDs expand.
    public static let bluetoothBase = UUID128(high: 0x0000_0000_0000_1000, low: 0x8000_0080_5F9B_34FB)
}

/// A service UUID in whichever of the three sizes the advertiser used.
public enum BluetoothUUID: Hashable, Sendable, CustomStringConvertible {
    case uuid16(UInt16)
    case uuid32(UInt32)
    case uuid128(UUID128)

    /// The full 128-bit form (short UUIDs expanded over the Bluetooth base UUID).
    public var uuid128: UUID128 {
        switch self {
        case let .uuid16(value): UUID128(high: UUID128.bluetoothBase.high | UInt64(value) << 32, low: UUID128.bluetoothBase.low)
        case let .uuid32(value): UUID128(high: UUID128.bluetoothBase.high | UInt64(value) << 32, low: UUID128.bluetoothBase.low)
        case let .uuid128(value): value
        }
    }

    /// Short UUIDs as 4 or 8 lower-case hex digits ("feaa"), long ones as `8-4-4-4-12`.
    public var description: String {
        switch self {
        case let .uuid16(value): HexText.lowercase([UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value)])
        case let .uuid32(value): HexText.lowercase((0 ..< 4).map { UInt8(truncatingIfNeeded: value >> (8 * UInt32(3 - $0))) })
        case let .uuid128(value): value.description
        }
    }

    /// Eddystone's service UUID.
    public static let eddystone = BluetoothUUID.uuid16(0xFEAA)
}
