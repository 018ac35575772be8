/// A value that must never reach a log: printing or interpolating it gives `***`.
///
/// Wrap keys and tokens as soon as they are read, and take `.revealed` only where the
/// bytes are used (hashing, an Authorization header).
public struct Secret<Value: Sendable>: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    public let revealed: Value

    public init(_ value: Value) { revealed = value }

    public var description: String { LogRedaction.mask }
    public var debugDescription: String { LogRedaction.mask }
}

/// The redaction rule of log lines: a field whose key names a secret is logged as `***`,
/// whatever its value, so a careless `["token": token]` still leaks nothing (see docs/security.md).
public enum LogRedaction {
    public static let mask = "***"

    /// Keys that are secrets wherever they appear, compared case-insensitively.
    public static let secretKeys: Set<String> = [
        "key", "token", "irk", "master_key", "secret", "password", "authorization", "ltk", "bearer",
    ]

    /// `key`, `token`, `irk`, `master_key`… and any `*_key` except identifiers of keys
    /// (`key_id`, `idempotency_key`), any `*_token`, `*_secret`, `*_password`.
    public static func isSecret(key: String) -> Bool {
        let key = key.lowercased()
        if secretKeys.contains(key) { return true }
        if key == "idempotency_key" || key.hasSuffix("_id") { return false }
        return key.hasSuffix("_key") || key.hasSuffix("_token") || key.hasSuffix("_secret") || key.hasSuffix("_password")
    }

    /// `value`, or the mask when `key` names a secret.
    public static func value(_ value: String, forKey key: String) -> String {
        isSecret(key: key) ? mask : value
    }
}
