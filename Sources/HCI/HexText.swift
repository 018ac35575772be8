/// Hex and decimal text read as UTF-8 bytes: the parsers of the addresses, UUIDs, keys and
/// numbers written in configuration files and server rosters (see docs/identities.md).
///
/// Byte by byte on purpose: a large roster holds many of these values, and splitting
/// them into Characters and Substrings costs a large share of validating it (see
/// docs/fleet.md, "Cost"). Only ASCII digits and letters are ever accepted, so reading
/// bytes accepts exactly what reading Characters did.
public enum HexText {
    /// The value of one hex digit, either case; nil for any other byte.
    @inlinable
    public static func digit(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0") ... UInt8(ascii: "9"): byte &- UInt8(ascii: "0")
        case UInt8(ascii: "a") ... UInt8(ascii: "f"): byte &- UInt8(ascii: "a") &+ 10
        case UInt8(ascii: "A") ... UInt8(ascii: "F"): byte &- UInt8(ascii: "A") &+ 10
        default: nil
        }
    }

    /// Exactly `byteCount` bytes written as `2 × byteCount` hex digits, either case, most
    /// significant first; nothing else (no separators, signs or spaces).
    public static func bytes(_ utf8: UnsafeBufferPointer<UInt8>, byteCount: Int) -> [UInt8]? {
        guard utf8.count == byteCount * 2 else { return nil }
        var bytes = [UInt8](repeating: 0, count: byteCount)
        var index = 0
        while index < byteCount {
            guard let high = digit(utf8[2 * index]), let low = digit(utf8[2 * index + 1]) else { return nil }
            bytes[index] = high << 4 | low
            index += 1
        }
        return bytes
    }

    /// `bytes` as lowercase hex digits, two per byte, in the order given (what `bytes(_:byteCount:)` reads back).
    public static func lowercase<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        let digits = Array("0123456789abcdef".utf8)
        var text = [UInt8]()
        text.reserveCapacity(bytes.underestimatedCount * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// A decimal `UInt16` as the standard library's `UInt16(_:)` reads it: an optional `+`
    /// or `-` (`-` only before a zero value), then at least one digit, leading zeros allowed.
    public static func decimalUInt16(_ utf8: UnsafeBufferPointer<UInt8>) -> UInt16? {
        var index = 0
        var negative = false
        if let sign = utf8.first, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") {
            negative = sign == UInt8(ascii: "-")
            index = 1
        }
        guard index < utf8.count else { return nil }
        var value: UInt32 = 0
        while index < utf8.count {
            let byte = utf8[index]
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + UInt32(byte - UInt8(ascii: "0"))
            guard value <= UInt32(UInt16.max) else { return nil }
            index += 1
        }
        guard !negative || value == 0 else { return nil }
        return UInt16(value)
    }
}

extension StringProtocol {
    /// `body` over the text's UTF-8 bytes, without a copy when the text is stored
    /// contiguously (a native String or a Substring of one). Inlinable so that callers in
    /// other modules get it specialized for String instead of through generic dispatch.
    @inlinable
    public func withUTF8Bytes<Result>(_ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        if let result = utf8.withContiguousStorageIfAvailable(body) { return result }
        return Array(utf8).withUnsafeBufferPointer(body)
    }
}
