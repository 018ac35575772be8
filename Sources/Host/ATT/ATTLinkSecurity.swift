/// How well the link under an ATT bearer is protected: what the controller's Encryption
/// Change said and how the key was made. The GATT server checks every attribute access
/// against it (see docs/gatt-server.md, "Permissions").
public struct ATTLinkSecurity: Hashable, Sendable, CustomStringConvertible {
    public enum Level: Int, Comparable, Hashable, Sendable {
        case unencrypted = 0
        /// Encrypted with a key from an unauthenticated pairing (Just Works).
        case encrypted = 1
        /// Encrypted with a key from an authenticated pairing (Numeric Comparison).
        case authenticated = 2

        public static func < (lhs: Level, rhs: Level) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    public var level: Level
    /// Whether a long-term key for this peer is already held (a bond), so that starting
    /// encryption, not pairing, is what the peer must do. This product keeps no LTK
    /// (docs/pairing.md), so it is false unless a caller says otherwise.
    public var peerHasLongTermKey: Bool

    public init(level: Level, peerHasLongTermKey: Bool = false) {
        self.level = level
        self.peerHasLongTermKey = peerHasLongTermKey
    }

    public static let unencrypted = ATTLinkSecurity(level: .unencrypted)
    public static let encrypted = ATTLinkSecurity(level: .encrypted)
    public static let authenticated = ATTLinkSecurity(level: .authenticated)

    /// The ATT error that refuses an access needing `requirement` on this link, nil when
    /// the link is good enough. Core Vol 3 Part C §10.3.1: Insufficient Authentication
    /// makes a peer without a key pair (the phone's pairing prompt); Insufficient
    /// Encryption makes a bonded peer encrypt with the key it has.
    public func refusal(for requirement: GATTSecurityRequirement) -> ATTErrorCode? {
        switch requirement {
        case .none:
            return nil
        case .encryption:
            guard level == .unencrypted else { return nil }
            return peerHasLongTermKey ? .insufficientEncryption : .insufficientAuthentication
        case .authentication:
            switch level {
            case .authenticated: return nil
            case .encrypted: return .insufficientAuthentication
            case .unencrypted: return peerHasLongTermKey ? .insufficientEncryption : .insufficientAuthentication
            }
        }
    }

    public var description: String {
        switch level {
        case .unencrypted: peerHasLongTermKey ? "unencrypted (bonded)" : "unencrypted"
        case .encrypted: "encrypted"
        case .authenticated: "encrypted, authenticated"
        }
    }
}

/// What a characteristic asks of the link before its value, or its client configuration,
/// may be read, written, notified or indicated.
public enum GATTSecurityRequirement: Int, Comparable, Hashable, Sendable {
    case none = 0
    case encryption = 1
    /// Encryption with a key from an authenticated (MITM-protected) pairing.
    case authentication = 2

    public static func < (lhs: GATTSecurityRequirement, rhs: GATTSecurityRequirement) -> Bool { lhs.rawValue < rhs.rawValue }
}
