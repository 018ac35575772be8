/// Bounds-checked little-endian reads over untrusted bytes: every read either
/// succeeds or throws `truncated` with where it happened; nothing traps. The one
/// reader of the code base: HCI parameters here, ACL/L2CAP/ATT in Host, persisted
/// state in GatewayCore.
public struct HCIByteReader {
    public let bytes: ArraySlice<UInt8>
    public private(set) var index: Int
    public let context: HCIDecodingError.Context

    public init(_ bytes: ArraySlice<UInt8>, context: HCIDecodingError.Context) {
        self.bytes = bytes
        self.index = bytes.startIndex
        self.context = context
    }

    public init(_ bytes: [UInt8], context: HCIDecodingError.Context) { self.init(bytes[...], context: context) }

    public var remaining: Int { bytes.endIndex - index }
    public var isAtEnd: Bool { index >= bytes.endIndex }

    public func require(_ count: Int) throws(HCIDecodingError) {
        guard count >= 0, remaining >= count else {
            throw .truncated(context, needed: count, available: remaining)
        }
    }

    public mutating func u8() throws(HCIDecodingError) -> UInt8 {
        try require(1)
        defer { index += 1 }
        return bytes[index]
    }

    public mutating func i8() throws(HCIDecodingError) -> Int8 { Int8(bitPattern: try u8()) }

    public mutating func u16() throws(HCIDecodingError) -> UInt16 {
        try require(2)
        defer { index += 2 }
        return UInt16(bytes[index]) | UInt16(bytes[index + 1]) << 8
    }

    public mutating func u24() throws(HCIDecodingError) -> UInt32 {
        try require(3)
        defer { index += 3 }
        return UInt32(bytes[index]) | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2]) << 16
    }

    public mutating func u64() throws(HCIDecodingError) -> UInt64 {
        try require(8)
        var value: UInt64 = 0
        for offset in 0 ..< 8 { value |= UInt64(bytes[index + offset]) << UInt64(8 * offset) }
        index += 8
        return value
    }

    public mutating func address() throws(HCIDecodingError) -> BluetoothAddress {
        try require(6)
        var value: UInt64 = 0
        for offset in 0 ..< 6 { value |= UInt64(bytes[index + offset]) << UInt64(8 * offset) }
        index += 6
        return BluetoothAddress(rawValue: value)
    }

    /// A slice of the underlying bytes: no copy.

    public mutating func slice(_ count: Int) throws(HCIDecodingError) -> ArraySlice<UInt8> {
        try require(count)
        defer { index += count }
        return bytes[index ..< index + count]
    }

    public mutating func rest() -> ArraySlice<UInt8> {
        defer { index = bytes.endIndex }
        return bytes[index...]
    }

    public func requireEnd() throws(HCIDecodingError) {
        guard isAtEnd else { throw .trailingBytes(context, count: remaining) }
    }
}

/// The one little-endian writer of the code base (HCI, ACL/L2CAP/ATT, persisted state).
extension [UInt8] {
    public mutating func appendLE(_ value: UInt16) {
        append(UInt8(truncatingIfNeeded: value))
        append(UInt8(truncatingIfNeeded: value >> 8))
    }

    public mutating func appendLE24(_ value: UInt32) {
        append(UInt8(truncatingIfNeeded: value))
        append(UInt8(truncatingIfNeeded: value >> 8))
        append(UInt8(truncatingIfNeeded: value >> 16))
    }

    public mutating func appendLE(_ value: UInt64) {
        for shift in stride(from: UInt64(0), to: 64, by: 8) { append(UInt8(truncatingIfNeeded: value >> shift)) }
    }

    public mutating func appendAddress(_ address: BluetoothAddress) {
        for shift in stride(from: UInt64(0), to: 48, by: 8) { append(UInt8(truncatingIfNeeded: address.rawValue >> shift)) }
    }
}
