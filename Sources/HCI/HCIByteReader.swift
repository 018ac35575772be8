/// Bounds-checked little-endian reads over untrusted bytes: every read either
/// succeeds or throws `truncated` with where it happened; nothing traps.
struct HCIByteReader {
    let bytes: ArraySlice<UInt8>
    var index: Int
    let context: HCIDecodingError.Context

    init(_ bytes: ArraySlice<UInt8>, context: HCIDecodingError.Context) {
        self.bytes = bytes
        self.index = bytes.startIndex
        self.context = context
    }

    var remaining: Int { bytes.endIndex - index }
    var isAtEnd: Bool { index >= bytes.endIndex }

    func require(_ count: Int) throws(HCIDecodingError) {
        guard count >= 0, remaining >= count else {
            throw .truncated(context, needed: count, available: remaining)
        }
    }

    mutating func u8() throws(HCIDecodingError) -> UInt8 {
        try require(1)
        defer { index += 1 }
        return bytes[index]
    }

    mutating func i8() throws(HCIDecodingError) -> Int8 { Int8(bitPattern: try u8()) }

    mutating func u16() throws(HCIDecodingError) -> UInt16 {
        try require(2)
        defer { index += 2 }
        return UInt16(bytes[index]) | UInt16(bytes[index + 1]) << 8
    }

    mutating func u24() throws(HCIDecodingError) -> UInt32 {
        try require(3)
        defer { index += 3 }
        return UInt32(bytes[index]) | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2]) << 16
    }

    mutating func u64() throws(HCIDecodingError) -> UInt64 {
        try require(8)
        var value: UInt64 = 0
        for offset in 0 ..< 8 { value |= UInt64(bytes[index + offset]) << UInt64(8 * offset) }
        index += 8
        return value
    }

    mutating func address() throws(HCIDecodingError) -> BluetoothAddress {
        try require(6)
        var value: UInt64 = 0
        for offset in 0 ..< 6 { value |= UInt64(bytes[index + offset]) << UInt64(8 * offset) }
        index += 6
        return BluetoothAddress(rawValue: value)
    }

    /// A slice of the underlying bytes: no copy.

    mutating func slice(_ count: Int) throws(HCIDecodingError) -> ArraySlice<UInt8> {
        try require(count)
        defer { index += count }
        return bytes[index ..< index + count]
    }

    mutating func rest() -> ArraySlice<UInt8> {
        defer { index = bytes.endIndex }
        return bytes[index...]
    }
}

extension [UInt8] {
    mutating func appendLE(_ value: UInt16) {
        append(UInt8(truncatingIfNeeded: value))
        append(UInt8(truncatingIfNeeded: value >> 8))
    }

    mutating func appendLE24(_ value: UInt32) {
        append(UInt8(truncatingIfNeeded: value))
        append(UInt8(truncatingIfNeeded: value >> 8))
        append(UInt8(truncatingIfNeeded: value >> 16))
    }

    mutating func appendLE(_ value: UInt64) {
        for shift in stride(from: UInt64(0), to: 64, by: 8) { append(UInt8(truncatingIfNeeded: value >> shift)) }
    }

    mutating func appendAddress(_ address: BluetoothAddress) {
        for shift in stride(from: UInt64(0), to: 48, by: 8) { append(UInt8(truncatingIfNeeded: address.rawValue >> shift)) }
    }
}
