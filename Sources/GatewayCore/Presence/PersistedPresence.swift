import HCI

/// One person's presence state as stored across restarts (see docs/presence.md, docs/event-api.md).
///
/// Times are wall-clock milliseconds since the Unix epoch: monotonic time starts again at
/// boot. The store keeps `encode()`'s bytes opaquely, in the same transaction as the
/// event that changed them; `init?(decoding:)` refuses anything that is not exactly a
/// record (wrong magic or version, bad lengths, unknown state, trailing bytes).
public struct PersistedPresence: Hashable, Sendable {
    public var personId: String
    public var state: PresenceState
    /// Open visit's start (its checkin's timestamp); nil without a visit.
    public var visitStartWallMilliseconds: Int64?
    /// When UNCONFIRMED began; nil unless UNCONFIRMED.
    public var unconfirmedSinceWallMilliseconds: Int64?
    /// The person's last sample; nil when never heard.
    public var lastSampleWallMilliseconds: Int64?
    /// The visit's deciding tag and its last address.
    public var tagId: String
    public var address: BluetoothAddress
    public var addressType: AddressType
    public var txPower: Int?

    public init(personId: String, state: PresenceState, visitStartWallMilliseconds: Int64?,
                unconfirmedSinceWallMilliseconds: Int64?, lastSampleWallMilliseconds: Int64?,
                tagId: String, address: BluetoothAddress, addressType: AddressType, txPower: Int?) {
        self.personId = personId
        self.state = state
        self.visitStartWallMilliseconds = visitStartWallMilliseconds
        self.unconfirmedSinceWallMilliseconds = unconfirmedSinceWallMilliseconds
        self.lastSampleWallMilliseconds = lastSampleWallMilliseconds
        self.tagId = tagId
        self.address = address
        self.addressType = addressType
        self.txPower = txPower
    }

    /// "BGPS": beacon-gateway presence state.
    static let magic: [UInt8] = [0x42, 0x47, 0x50, 0x53]
    static let version: UInt8 = 1
    /// Ids are short; anything longer is not a record this gateway wrote.
    static let maximumIdLength = 1024

    private struct Present: OptionSet {
        let rawValue: UInt8
        static let visitStart = Present(rawValue: 1 << 0)
        static let unconfirmedSince = Present(rawValue: 1 << 1)
        static let lastSample = Present(rawValue: 1 << 2)
        static let txPower = Present(rawValue: 1 << 3)
        static let all: Present = [.visitStart, .unconfirmedSince, .lastSample, .txPower]
    }

    /// magic(4) version(1) state(1) present(1) visitStart(8) unconfirmedSince(8)
    /// lastSample(8) address(6) addressType(1) txPower(1) personIdLength(2) personId
    /// tagIdLength(2) tagId; integers little-endian, absent values written as 0.
    public func encode() -> [UInt8] {
        var present: Present = []
        if visitStartWallMilliseconds != nil { present.insert(.visitStart) }
        if unconfirmedSinceWallMilliseconds != nil { present.insert(.unconfirmedSince) }
        if lastSampleWallMilliseconds != nil { present.insert(.lastSample) }
        if txPower != nil { present.insert(.txPower) }
        var bytes = Self.magic
        bytes += [Self.version, state.rawValue, present.rawValue]
        for value in [visitStartWallMilliseconds, unconfirmedSinceWallMilliseconds, lastSampleWallMilliseconds] {
            bytes.appendLE(UInt64(bitPattern: value ?? 0))
        }
        bytes.appendAddress(address)
        bytes.append(addressType.rawValue)
        bytes.append(UInt8(bitPattern: Int8(clamping: txPower ?? 0)))
        for id in [personId, tagId] {
            let utf8 = Array(id.utf8.prefix(Self.maximumIdLength))
            bytes.appendLE(UInt16(truncatingIfNeeded: utf8.count))
            bytes += utf8
        }
        return bytes
    }

    public init?(decoding bytes: [UInt8]) {
        var reader = HCIByteReader(bytes, context: .aboveHCI)
        func string() -> String? {
            guard let length = try? reader.u16(), length <= Self.maximumIdLength,
                  let utf8 = try? reader.slice(Int(length)) else { return nil }
            return String(validating: utf8, as: UTF8.self)
        }
        guard (try? reader.slice(4)).map(Array.init) == Self.magic, (try? reader.u8()) == Self.version,
              let state = (try? reader.u8()).flatMap(PresenceState.init(rawValue:)),
              let presentRaw = try? reader.u8()
        else { return nil }
        let present = Present(rawValue: presentRaw)
        guard present.isSubset(of: .all),
              let visitStart = try? reader.u64(), let unconfirmedSince = try? reader.u64(), let lastSample = try? reader.u64(),
              let address = try? reader.address(), let addressType = try? reader.u8(), let txPower = try? reader.i8(),
              let personId = string(), let tagId = string(), reader.isAtEnd
        else { return nil }
        self.init(personId: personId, state: state,
                  visitStartWallMilliseconds: present.contains(.visitStart) ? Int64(bitPattern: visitStart) : nil,
                  unconfirmedSinceWallMilliseconds: present.contains(.unconfirmedSince) ? Int64(bitPattern: unconfirmedSince) : nil,
                  lastSampleWallMilliseconds: present.contains(.lastSample) ? Int64(bitPattern: lastSample) : nil,
                  tagId: tagId, address: address, addressType: AddressType(rawValue: addressType),
                  txPower: present.contains(.txPower) ? Int(txPower) : nil)
    }
}
