/// Advertising or scan-response data: a run of length-type-value structures
/// (Core Specification Vol 3 Part C §11).
///
/// Iterating it is lazy and allocation-free: each element is a slice of the original
/// bytes, so the per-report hot path can look for the one or two structures tag matching
/// needs without decoding the rest. `AdvertisementSummary` is the full decode.
public struct AdvertisingData: Sequence, Sendable {
    public var bytes: ArraySlice<UInt8>

    public init(_ bytes: ArraySlice<UInt8>) { self.bytes = bytes }
    public init(_ bytes: [UInt8]) { self.bytes = bytes[...] }
    public init(_ bytes: some Collection<UInt8>) { self.bytes = ArraySlice(bytes) }

    public func makeIterator() -> Iterator { Iterator(bytes) }

    /// Walks the structures. After `next()` returned nil, `malformations` says whether the
    /// walk ended early because a length ran past the end.
    public struct Iterator: IteratorProtocol, Sendable {
        private let bytes: ArraySlice<UInt8>
        private var index: Int
        public private(set) var malformations: ADMalformations = []

        init(_ bytes: ArraySlice<UInt8>) {
            self.bytes = bytes
            index = bytes.startIndex
        }

        public mutating func next() -> ADStructure? {
            let end = bytes.endIndex
            guard index < end else { return nil }
            let length = Int(bytes[index])
            // A zero length is the early terminator the Core spec allows; controllers pad
            // legacy data to 31 bytes with zeros, so this is normal, not malformed.
            guard length > 0 else {
                index = end
                return nil
            }
            let typeIndex = index + 1
            // `length` is at most 255, so this cannot overflow.
            let valueEnd = typeIndex + length
            guard valueEnd <= end else {
                malformations.insert(.lengthPastEnd)
                index = end
                return nil
            }
            index = valueEnd
            return ADStructure(type: ADType(rawValue: bytes[typeIndex]), value: bytes[(typeIndex + 1) ..< valueEnd])
        }
    }
}

/// One length-type-value structure: its type and its value bytes (a slice of the report).
public struct ADStructure: Hashable, Sendable {
    public var type: ADType
    public var value: ArraySlice<UInt8>

    public init(type: ADType, value: ArraySlice<UInt8>) {
        self.type = type
        self.value = value
    }
}

/// Checked reads of untrusted bytes, for both `ArraySlice` and the unsafe buffers the hot
/// path walks (whose subscripts are not bounds-checked in optimised builds, so every
/// read here checks first).
extension RandomAccessCollection where Element == UInt8, Index == Int {
    /// The byte `offset` places after the start, or nil past the end: untrusted data is
    /// never indexed without a check.
    @inline(__always)
    func byte(at offset: Int) -> UInt8? {
        guard offset >= 0, offset < count else { return nil }
        return self[startIndex + offset]
    }

    @inline(__always)
    func uint16LE(at offset: Int) -> UInt16? {
        guard offset >= 0, offset + 2 <= count else { return nil }
        return UInt16(self[startIndex + offset]) | UInt16(self[startIndex + offset + 1]) << 8
    }

    @inline(__always)
    func uint16BE(at offset: Int) -> UInt16? {
        guard offset >= 0, offset + 2 <= count else { return nil }
        return UInt16(self[startIndex + offset]) << 8 | UInt16(self[startIndex + offset + 1])
    }

    @inline(__always)
    func uint32BE(at offset: Int) -> UInt32? {
        guard offset >= 0, offset + 4 <= count else { return nil }
        var value: UInt32 = 0
        for i in 0 ..< 4 { value = value << 8 | UInt32(self[startIndex + offset + i]) }
        return value
    }

    /// `count` bytes from `offset`, most significant first, as an integer (count ≤ 8).
    @inline(__always)
    func uintBE(at offset: Int, count byteCount: Int) -> UInt64? {
        guard offset >= 0, byteCount <= 8, offset + byteCount <= count else { return nil }
        var value: UInt64 = 0
        for i in 0 ..< byteCount { value = value << 8 | UInt64(self[startIndex + offset + i]) }
        return value
    }
}
