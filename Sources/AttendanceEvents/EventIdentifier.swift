import Advertisements

/// The event's local `id`: a version-4 UUID in its 36-character text form.
public enum EventIdentifier {
    /// A UUID v4 from 16 random bytes (version and variant bits set here); nil unless
    /// exactly 16 bytes are given.
    public static func uuidV4(randomBytes: [UInt8]) -> String? {
        guard randomBytes.count == 16 else { return nil }
        var bytes = randomBytes
        bytes[6] = bytes[6] & 0x0F | 0x40 // version 4
        bytes[8] = bytes[8] & 0x3F | 0x80 // variant 10xx (RFC 9562)
        return TagIdentity.formatUUID(bytes)
    }

    /// A UUID v4 from `generator` (the system's CSPRNG by default).
    public static func uuidV4<G: RandomNumberGenerator>(using generator: inout G) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(16)
        for _ in 0 ..< 2 {
            let word = generator.next()
            for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: word >> UInt64(shift))) }
        }
        // Exactly 16 bytes were just appended.
        return uuidV4(randomBytes: bytes) ?? ""
    }

    public static func uuidV4() -> String {
        var generator = SystemRandomNumberGenerator()
        return uuidV4(using: &generator)
    }
}
