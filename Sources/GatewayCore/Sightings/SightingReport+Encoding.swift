/// The bytes of a signed sighting report (docs/neighbours.md, "On the bus"), all integers
/// big-endian:
///
/// | bytes | field |
/// | --- | --- |
/// | 3 | `BGS` |
/// | 1 | version, 2 (1 is still read: an earlier door's, whose flags have bit 0 only) |
/// | 1 | L, the sender's length (1…64) |
/// | L | the sender's gateway id, UTF-8 |
/// | 8 | the sender's wall clock, ms since the Unix epoch (signed) |
/// | 2 | N, the number of sightings (0…512; 0 is a heartbeat) |
/// | 10 × N | per sighting: person hash (8), filtered RSSI (1, signed dBm), flags (1: bit 0 = holds the visit, bit 1 = the sender confirmed the person's passage through its doorway (version 2); the other bits 0) |
/// | 32 | HMAC-SHA256 with `K_sign` of every byte before it |
extension SightingReport {
    static let magic: [UInt8] = Array("BGS".utf8)
    static let version: UInt8 = 2
    /// An earlier door's reports: read, with bit 0 of the flags only.
    static let firstVersion: UInt8 = 1
    static let sightingBytes = 10
    static let signatureBytes = 32
    static let holdsFlag: UInt8 = 0x01
    static let doorwayFlag: UInt8 = 0x02

    /// The largest report there can be: what a reader reads before refusing a payload.
    public static let maximumBytes = magic.count + 1 + 1 + maximumSenderBytes + 8 + 2
        + maximumSightings * sightingBytes + signatureBytes

    /// The report as signed bytes. At most `maximumSightings` sightings and a sender of
    /// 1…64 bytes (a longer sender is cut, more sightings are dropped: callers split).
    public func encoded(keys: SightingKeys) -> [UInt8] {
        var bytes = Self.magic
        bytes.append(wireVersion)
        let senderBytes = Array(sender.utf8.prefix(Self.maximumSenderBytes))
        bytes.append(UInt8(senderBytes.count))
        bytes += senderBytes
        let wall = UInt64(bitPattern: wallMilliseconds)
        for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: wall >> UInt64(shift))) }
        let count = min(sightings.count, Self.maximumSightings)
        bytes.append(UInt8(count >> 8))
        bytes.append(UInt8(count & 0xFF))
        for sighting in sightings.prefix(count) {
            for shift in stride(from: 56, through: 0, by: -8) {
                bytes.append(UInt8(truncatingIfNeeded: sighting.person.rawValue >> UInt64(shift)))
            }
            bytes.append(UInt8(bitPattern: sighting.rssi))
            let passage = sighting.passageConfirmed && wireVersion == Self.version
            bytes.append((sighting.holds ? Self.holdsFlag : 0) | (passage ? Self.doorwayFlag : 0))
        }
        bytes += keys.signature(of: bytes[...])
        return bytes
    }

    /// The report in `bytes` if they are well formed, without looking at the signature
    /// (`SightingVerifier` does, after the cheaper checks). Nil for anything else: a
    /// wrong magic or version, a length that does not add up, an empty or non-UTF-8
    /// sender, unknown flags.
    static func parse(_ bytes: [UInt8]) -> (report: SightingReport, bodyEnd: Int)? {
        guard bytes.count <= maximumBytes, bytes.count >= magic.count + 2 + 1 + 8 + 2 + signatureBytes,
              bytes.starts(with: magic), bytes[magic.count] == version || bytes[magic.count] == firstVersion else { return nil }
        let known = bytes[magic.count] == version ? holdsFlag | doorwayFlag : holdsFlag
        var offset = magic.count + 1
        let senderLength = Int(bytes[offset])
        offset += 1
        guard senderLength >= 1, senderLength <= maximumSenderBytes,
              bytes.count >= offset + senderLength + 8 + 2 + signatureBytes else { return nil }
        let senderBytes = bytes[offset ..< offset + senderLength]
        guard senderBytes.allSatisfy({ $0 > 0x20 && $0 != 0x7F }),
              let sender = String(validating: senderBytes, as: UTF8.self) else { return nil }
        offset += senderLength
        var wall: UInt64 = 0
        for byte in bytes[offset ..< offset + 8] { wall = wall << 8 | UInt64(byte) }
        offset += 8
        let count = Int(bytes[offset]) << 8 | Int(bytes[offset + 1])
        offset += 2
        guard count <= maximumSightings, bytes.count == offset + count * sightingBytes + signatureBytes else { return nil }
        var sightings: [Sighting] = []
        sightings.reserveCapacity(count)
        for _ in 0 ..< count {
            var hash: UInt64 = 0
            for byte in bytes[offset ..< offset + 8] { hash = hash << 8 | UInt64(byte) }
            let flags = bytes[offset + 9]
            guard flags & ~known == 0 else { return nil }
            sightings.append(Sighting(person: PersonHash(rawValue: hash), rssi: Int8(bitPattern: bytes[offset + 8]),
                                      holds: flags & holdsFlag != 0, passageConfirmed: flags & doorwayFlag != 0))
            offset += sightingBytes
        }
        return (SightingReport(sender: sender, wallMilliseconds: Int64(bitPattern: wall), sightings: sightings,
                               wireVersion: bytes[magic.count]), offset)
    }
}
