/// A key (IRK, LTK, MacKey, DHKey) that must never reach a log or a debug dump: its
/// description, debug description and mirror show no octet. Take `revealed` only where
/// the octets are used (a security function, an HCI command, the enrolment output).
public struct SecretOctets<Value: FixedOctets>: Hashable, Sendable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable {
    public let revealed: Value

    public init(_ value: Value) { revealed = value }

    public var description: String { "<\(Value.count * 8)-bit secret>" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}

/// An IRK, LTK or MacKey.
public typealias SecretKey128 = SecretOctets<Octets128>
/// The P-256 ECDH shared secret (DHKey, the X coordinate).
public typealias DHKey = SecretOctets<Octets256>
