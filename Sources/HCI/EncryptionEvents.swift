// The events of LE encryption as the peripheral: the controller asks for the key (LE
// Long Term Key Request), then says whether the link is encrypted (Encryption Change,
// or Encryption Key Refresh Complete when an encrypted link was re-keyed).

/// LE Long Term Key Request (LE Meta subevent 0x05): the central started encryption on
/// a connection where we are the peripheral. Secure Connections keys come with Rand and
/// EDIV zero.
public struct LELongTermKeyRequest: Hashable, Sendable, HCIFieldLayout {
    public static var fields: [HCIField<Self>] {
        [.field(\.connectionHandle, .connectionHandle), .field(\.randomNumber), .field(\.encryptedDiversifier)]
    }

    public var connectionHandle: UInt16 = 0
    public var randomNumber: UInt64 = 0
    public var encryptedDiversifier: UInt16 = 0

    public init() {}

    public init(connectionHandle: UInt16, randomNumber: UInt64 = 0, encryptedDiversifier: UInt16 = 0) {
        self.connectionHandle = connectionHandle
        self.randomNumber = randomNumber
        self.encryptedDiversifier = encryptedDiversifier
    }
}

/// Encryption Change, v1 (event 0x08) or v2 (event 0x59, with the key size).
public struct HCIEncryptionChange: Hashable, Sendable, HCIFieldLayout {
    public static var fields: [HCIField<Self>] {
        [.field(\.status), .field(\.connectionHandle, .connectionHandle), .field(\.encryptionEnabled),
         .field(\.encryptionKeySize).only(when: { $0.format == .v2 })]
    }

    public enum Format: Hashable, Sendable { case v1, v2 }

    public var format = Format.v1
    public var status = HCIStatus.success
    public var connectionHandle: UInt16 = 0
    /// 0x00 off; on an LE link 0x01 means AES-CCM. Other values are kept as they came.
    public var encryptionEnabled: UInt8 = 0
    /// v2 only (0 otherwise).
    public var encryptionKeySize: UInt8 = 0

    public init() {}

    public init(format: Format = .v1, status: HCIStatus = .success, connectionHandle: UInt16, encryptionEnabled: UInt8,
                encryptionKeySize: UInt8 = 0) {
        self.format = format
        self.status = status
        self.connectionHandle = connectionHandle
        self.encryptionEnabled = encryptionEnabled
        self.encryptionKeySize = format == .v2 ? encryptionKeySize : 0
    }

    /// Whether the link is now encrypted.
    public var isEnabled: Bool { encryptionEnabled != 0 }
}

/// Encryption Key Refresh Complete (event 0x30): an encrypted link was re-keyed.
public struct HCIEncryptionKeyRefreshComplete: Hashable, Sendable, HCIFieldLayout {
    public static var fields: [HCIField<Self>] { [.field(\.status), .field(\.connectionHandle, .connectionHandle)] }
    public var status = HCIStatus.success
    public var connectionHandle: UInt16 = 0

    public init() {}

    public init(status: HCIStatus = .success, connectionHandle: UInt16) {
        self.status = status
        self.connectionHandle = connectionHandle
    }
}
