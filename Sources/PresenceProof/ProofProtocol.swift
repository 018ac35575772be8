import BluetoothCrypto
import HCI

/// Proof protocol v1 (see docs/proof-protocol.md): the gateway writes `0x01 ‖ nonce(16)` to the tag's
/// Challenge characteristic and reads `0x01 ‖ first16(HMAC-SHA256(K_tag, "BGWv1" ‖ nonce))`
/// back from Response.
public enum ProofProtocol {
    public static let version: UInt8 = 0x01
    public static let nonceLength = 16
    public static let macLength = 16
    /// Version byte and nonce.
    public static let challengeLength = 1 + nonceLength
    /// Version byte and MAC.
    public static let responseLength = 1 + macLength

    /// The ASCII label the MAC covers before the nonce.
    static let macLabel = Array("BGWv1".utf8)

    /// The service and its two characteristics, as 16 bytes most significant first
    /// (the way the UUIDs are written; ATT carries them reversed).
    public static let serviceUUID: [UInt8] = uuid("327c0001652e44d5b1549f067567c974")
    public static let challengeCharacteristicUUID: [UInt8] = uuid("327c0002652e44d5b1549f067567c974")
    public static let responseCharacteristicUUID: [UInt8] = uuid("327c0003652e44d5b1549f067567c974")

    private static func uuid(_ text: String) -> [UInt8] {
        text.withUTF8Bytes { HexText.bytes($0, byteCount: 16) } ?? []
    }

    /// A challenge with a fresh nonce from `generator` (the CSPRNG in production:
    /// `SystemRandomNumberGenerator`; a seeded one in tests).
    public static func makeChallenge<G: RandomNumberGenerator>(using generator: inout G) -> ProofChallenge {
        var nonce = [UInt8]()
        nonce.reserveCapacity(nonceLength)
        for _ in 0 ..< nonceLength { nonce.append(UInt8.random(in: .min ... .max, using: &generator)) }
        return ProofChallenge(uncheckedNonce: nonce)
    }

    /// `first16(HMAC-SHA256(K_tag, "BGWv1" ‖ nonce))`.
    public static func mac(key: TagKey, nonce: [UInt8]) -> [UInt8] {
        Array(SHA256.hmac(key: key.bytes, message: macLabel + nonce).prefix(macLength))
    }

    /// The response a genuine tag gives: `0x01 ‖ mac`.
    public static func expectedResponse(to challenge: ProofChallenge, key: TagKey) -> [UInt8] {
        [version] + mac(key: key, nonce: challenge.nonce)
    }

    /// Checks what the tag answered. The MAC is compared in constant time; the length and
    /// version byte are not secret and are checked first to say what was wrong.
    public static func verify(response: some Collection<UInt8>, to challenge: ProofChallenge,
                              key: TagKey) throws(ProofVerificationError) {
        guard response.count == responseLength else { throw .wrongLength(response.count) }
        guard response.first == version else { throw .unsupportedVersion(response.first ?? 0) }
        let expected = mac(key: key, nonce: challenge.nonce)
        guard constantTimeEqual(response.dropFirst(), expected) else { throw .macMismatch }
    }
}

/// One attempt's challenge. The nonce is not secret, but it must never be reused.
public struct ProofChallenge: Hashable, Sendable {
    public let nonce: [UInt8]

    /// Nil unless the nonce is exactly 16 bytes (tests and replays of a known nonce).
    public init?(nonce: [UInt8]) {
        guard nonce.count == ProofProtocol.nonceLength else { return nil }
        self.nonce = nonce
    }

    init(uncheckedNonce: [UInt8]) { nonce = uncheckedNonce }

    /// What is written to the Challenge characteristic: `0x01 ‖ nonce`.
    public var bytes: [UInt8] { [ProofProtocol.version] + nonce }
}

public enum ProofVerificationError: Error, Hashable, Sendable, CustomStringConvertible {
    case wrongLength(Int)
    case unsupportedVersion(UInt8)
    case macMismatch

    public var description: String {
        switch self {
        case .wrongLength(let count): "response is \(count) bytes, expected \(ProofProtocol.responseLength)"
        case .unsupportedVersion(let version): "response version 0x" + String(version, radix: 16) + ", expected 0x01"
        case .macMismatch: "response MAC does not match"
        }
    }
}
