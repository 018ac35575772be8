import Host
import PresenceProof

/// The Presence Proof service of docs/proof-protocol.md as data: Challenge (write with
/// response; every write reaches `ProofTag`, which refuses all but 17 bytes and clears
/// Response then) and Response (read; nothing to read until a challenge came).
extension GATTServiceDefinition {
    public static let presenceProof = GATTServiceDefinition(uuid: .presenceProofService, characteristics: [
        GATTCharacteristicDefinition(uuid: .proofChallenge, properties: .write, value: .fixed([])),
        GATTCharacteristicDefinition(uuid: .proofResponse, properties: .read,
                                     value: .variable(initial: .unavailable(.unlikelyError), maxLength: ProofProtocol.responseLength)),
    ])
}

extension GATTUUID {
    public static let presenceProofService = proofUUID(ProofProtocol.serviceUUID)
    public static let proofChallenge = proofUUID(ProofProtocol.challengeCharacteristicUUID)
    public static let proofResponse = proofUUID(ProofProtocol.responseCharacteristicUUID)

    /// The protocol's UUIDs are 16 bytes by construction; the fallback never serves.
    private static func proofUUID(_ bytes: [UInt8]) -> GATTUUID { GATTUUID(bytes: bytes) ?? GATTUUID(uuid16: 0) }
}
