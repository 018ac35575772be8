// The byte layouts a field can have: integers, flags, addresses, named integers,
// nested layouts, data and lists.

/// How a value is laid out in bytes.
public struct HCIFieldCodec<Value> {
    let write: (Value, inout [UInt8]) -> Void
    let read: (inout HCIByteReader) throws(HCIDecodingError) -> Value

    public init(write: @escaping (Value, inout [UInt8]) -> Void,
                read: @escaping (inout HCIByteReader) throws(HCIDecodingError) -> Value) {
        self.write = write
        self.read = read
    }
}

/// A type with one layout wherever it appears.
public protocol HCIFieldValue {
    static var codec: HCIFieldCodec<Self> { get }
}

/// Integers are little-endian, as wide as their type.
extension HCIFieldValue where Self: FixedWidthInteger {
    public static var codec: HCIFieldCodec<Self> {
        HCIFieldCodec(
            write: { value, bytes in
                for shift in stride(from: 0, to: Self.bitWidth, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> shift)) }
            },
            read: { (reader: inout HCIByteReader) throws(HCIDecodingError) in
                try reader.slice(Self.bitWidth / 8).reversed().reduce(into: Self.zero) { $0 = $0 << 8 | Self(truncatingIfNeeded: $1) }
            })
    }
}

extension UInt8: HCIFieldValue {}
extension Int8: HCIFieldValue {}
extension UInt16: HCIFieldValue {}
extension UInt64: HCIFieldValue {}

extension Bool: HCIFieldValue {
    /// One byte: 0x01 true, 0x00 false; any non-zero byte reads as true.
    public static var codec: HCIFieldCodec<Self> {
        HCIFieldCodec(write: { value, bytes in bytes.append(value ? 1 : 0) },
                      read: { (reader: inout HCIByteReader) throws(HCIDecodingError) in try reader.u8() != 0 })
    }
}

extension BluetoothAddress: HCIFieldValue {
    public static var codec: HCIFieldCodec<Self> {
        HCIFieldCodec(write: { value, bytes in bytes.appendAddress(value) },
                      read: { (reader: inout HCIByteReader) throws(HCIDecodingError) in try reader.address() })
    }
}

/// A named wrapper of an integer field (status, address type, masks): laid out as its raw value.
public protocol HCIRawField: RawRepresentable, HCIFieldValue where RawValue: HCIFieldValue {
    init(rawValue: RawValue)
}

extension HCIRawField {
    public static var codec: HCIFieldCodec<Self> {
        let raw = RawValue.codec
        return HCIFieldCodec(write: { value, bytes in raw.write(value.rawValue, &bytes) },
                             read: { (reader: inout HCIByteReader) throws(HCIDecodingError) in Self(rawValue: try raw.read(&reader)) })
    }
}

extension HCIFieldCodec where Value == UInt32 {
    /// The 24-bit little-endian intervals of the extended advertising commands.
    public static var u24: Self {
        HCIFieldCodec(write: { value, bytes in bytes.appendLE24(value) },
                      read: { (reader: inout HCIByteReader) throws(HCIDecodingError) in try reader.u24() })
    }
}

extension HCIFieldCodec where Value == UInt16 {
    /// A connection handle: 12 bits; the packet boundary and broadcast flags that
    /// events may carry in the top four are dropped when read.
    public static var connectionHandle: Self {
        HCIFieldCodec(write: { value, bytes in bytes.appendLE(value) },
                      read: { (reader: inout HCIByteReader) throws(HCIDecodingError) in try reader.u16() & 0x0FFF })
    }
}

extension HCIFieldCodec where Value == ArraySlice<UInt8> {
    /// The rest of the parameters, uninterpreted (a Command Complete's return parameters).
    public static var rest: Self {
        HCIFieldCodec(write: { value, bytes in bytes.append(contentsOf: value) },
                      read: { (reader: inout HCIByteReader) throws(HCIDecodingError) in reader.rest() })
    }
}

extension HCIFieldCodec where Value == [UInt8] {
    /// A length byte, then that many bytes (at most `maximum`; longer data is cut when
    /// encoded). `padded`: always `maximum` bytes follow, the data zero padded (legacy
    /// advertising and scan response data).
    public static func lengthPrefixed(maximum: Int, padded: Bool = false) -> Self {
        HCIFieldCodec(
            write: { value, bytes in
                let used = value.prefix(maximum)
                bytes.append(UInt8(used.count))
                bytes.append(contentsOf: used)
                if padded { bytes.append(contentsOf: repeatElement(0, count: maximum - used.count)) }
            },
            read: { (reader: inout HCIByteReader) throws(HCIDecodingError) in
                let length = Int(try reader.u8())
                guard length <= maximum else { throw .invalidValue(reader.context, field: .dataLength, value: length) }
                return Array(try reader.slice(padded ? maximum : length).prefix(length))
            })
    }
}

extension HCIFieldCodec {
    /// A count byte, then that many fixed-size elements filling the rest of the
    /// parameters (at most `maximum` are encoded).
    public static func list<Element: HCIFieldLayout>(maximum: Int) -> Self where Value == [Element] {
        HCIFieldCodec(
            write: { value, bytes in
                let used = value.prefix(maximum)
                bytes.append(UInt8(used.count))
                for element in used { element.encodeFields(into: &bytes) }
            },
            read: { (reader: inout HCIByteReader) throws(HCIDecodingError) in
                let count = Int(try reader.u8())
                guard count * Element().encodedFields.count == reader.remaining else {
                    throw .countDoesNotFit(reader.context, count: count)
                }
                var elements = [Element]()
                elements.reserveCapacity(count)
                for _ in 0 ..< count { elements.append(try Element.codec.read(&reader)) }
                return elements
            })
    }
}

extension HCIFieldCodec {
    /// Decodes a value laid out this way from the start of `bytes` (bytes after it are ignored).
    public func decode(_ bytes: ArraySlice<UInt8>, context: HCIDecodingError.Context) throws(HCIDecodingError) -> Value {
        var reader = HCIByteReader(bytes, context: context)
        return try read(&reader)
    }
}
