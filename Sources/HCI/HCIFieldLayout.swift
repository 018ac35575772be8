// The one generic path for HCI parameters: a command, event or return parameters type
// lists its fields once (key path + byte layout, in wire order) and is encoded and
// decoded from that list, the way Bumble's hci.py declares `fields`. Only the
// advertising report lists keep hand-written decoders: they are the ingest hot path.

/// A type whose bytes are the fields it lists, in order.
public protocol HCIFieldLayout: HCIFieldValue {
    /// The value decoding starts from; each field listed overwrites its part, and a
    /// field skipped by its condition keeps the value given here.
    init()
    static var fields: [HCIField<Self>] { get }
}

extension HCIFieldLayout {
    public func encodeFields(into bytes: inout [UInt8]) {
        for field in Self.fields { field.encode(self, &bytes) }
    }

    public var encodedFields: [UInt8] {
        var bytes = [UInt8]()
        encodeFields(into: &bytes)
        return bytes
    }

    public mutating func decodeFields(from reader: inout HCIByteReader) throws(HCIDecodingError) {
        for field in Self.fields { try field.decode(&self, &reader) }
    }

    /// Decodes `bytes`; `exact` rejects bytes left over (commands), otherwise they
    /// are ignored (events and return parameters: later versions append fields).
    public init(decoding bytes: ArraySlice<UInt8>, context: HCIDecodingError.Context, exact: Bool) throws(HCIDecodingError) {
        var reader = HCIByteReader(bytes, context: context)
        self.init()
        try decodeFields(from: &reader)
        if exact { try reader.requireEnd() }
    }

    public static var codec: HCIFieldCodec<Self> {
        HCIFieldCodec(write: { value, bytes in value.encodeFields(into: &bytes) },
                      read: { (reader: inout HCIByteReader) throws(HCIDecodingError) in
                          var value = Self()
                          try value.decodeFields(from: &reader)
                          return value
                      })
    }
}

/// One field of `Root`: where its value lives and how its bytes are laid out.
public struct HCIField<Root> {
    let encode: (Root, inout [UInt8]) -> Void
    let decode: (inout Root, inout HCIByteReader) throws(HCIDecodingError) -> Void

    public static func field<Value>(_ keyPath: WritableKeyPath<Root, Value>, _ codec: HCIFieldCodec<Value>) -> Self {
        Self(encode: { root, bytes in codec.write(root[keyPath: keyPath], &bytes) },
             decode: { (root: inout Root, reader: inout HCIByteReader) throws(HCIDecodingError) in
                 root[keyPath: keyPath] = try codec.read(&reader)
             })
    }

    /// A field laid out the way its type always is.
    public static func field<Value: HCIFieldValue>(_ keyPath: WritableKeyPath<Root, Value>) -> Self {
        field(keyPath, Value.codec)
    }

    /// This field only in the formats where `condition` holds (decoding sets the
    /// format before the fields are read).
    public func only(when condition: @escaping (Root) -> Bool) -> Self {
        Self(encode: { root, bytes in if condition(root) { encode(root, &bytes) } },
             decode: { (root: inout Root, reader: inout HCIByteReader) throws(HCIDecodingError) in
                 if condition(root) { try decode(&root, &reader) }
             })
    }

    /// A PHY bit mask followed by one entry per PHY in the mask, in bit order
    /// (Scanning_PHYs, Initiating_PHYs); a bit outside `entries` is an invalid value.
    public static func phyEntries<Entry: HCIFieldLayout>(_ entries: [(phy: LEPhys, keyPath: WritableKeyPath<Root, Entry?>)]) -> Self {
        let known = entries.reduce(into: LEPhys()) { $0.insert($1.phy) }
        return Self(
            encode: { root, bytes in
                let present = entries.filter { root[keyPath: $0.keyPath] != nil }
                bytes.append(present.reduce(into: LEPhys()) { $0.insert($1.phy) }.rawValue)
                for entry in present { root[keyPath: entry.keyPath]?.encodeFields(into: &bytes) }
            },
            decode: { (root: inout Root, reader: inout HCIByteReader) throws(HCIDecodingError) in
                let phys = LEPhys(rawValue: try reader.u8())
                guard phys.subtracting(known).isEmpty else {
                    throw .invalidValue(reader.context, field: .phys, value: Int(phys.rawValue))
                }
                for entry in entries {
                    root[keyPath: entry.keyPath] = phys.contains(entry.phy) ? try Entry.codec.read(&reader) : nil
                }
            })
    }
}
