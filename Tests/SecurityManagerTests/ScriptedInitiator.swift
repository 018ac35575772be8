import BluetoothCrypto
import HCI
@testable import SecurityManager

/// The central's side of an LE Secure Connections pairing, written from the
/// specification with the same toolbox, to drive the responder PDU by PDU. It checks
/// what the responder sends the way a phone would (confirm value, DHKey check).
struct ScriptedInitiator {
    var request: PairingFeatures
    let keyPair: P256KeyPair
    /// Na.
    let nonce: Octets128
    let address: AddressWithType
    let responderAddress: AddressWithType
    let irk: SecretKey128
    let identityAddress: BluetoothAddress

    var response: PairingFeatures?
    var peerKey: P256PublicKey?
    var peerConfirm: Octets128?
    var peerNonce: Octets128?
    var macKey: SecretKey128?
    var ltk: SecretKey128?

    init(ioCapability: IOCapability = .noInputNoOutput, authentication: AuthenticationRequirements = [.bonding, .mitm, .secureConnections],
         keyDistribution: KeyDistribution = [.encryptionKey, .identityKey], keyPair: P256KeyPair = P256KeyPair.generate()!,
         nonce: Octets128 = SecureRandom.octets128(), address: AddressWithType = Fixture.phoneAddress,
         responderAddress: AddressWithType = Fixture.doorAddress) {
        request = PairingFeatures(ioCapability: ioCapability, authenticationRequirements: authentication,
                                  initiatorKeyDistribution: keyDistribution, responderKeyDistribution: keyDistribution)
        self.keyPair = keyPair
        self.nonce = nonce
        self.address = address
        self.responderAddress = responderAddress
        irk = SecretKey128(Fixture.phoneIRK)
        identityAddress = Fixture.phoneIdentity
    }

    var pairingRequest: [UInt8] { request.pdu(.pairingRequest) }
    var publicKey: [UInt8] { [SMPCode.pairingPublicKey.rawValue] + keyPair.publicKey.smpOctets }
    var random: [UInt8] { [SMPCode.pairingRandom.rawValue] + nonce.leastSignificantFirst }

    mutating func take(response pdu: [UInt8]) -> Bool {
        guard pdu.first == SMPCode.pairingResponse.rawValue, let features = PairingFeatures(parameters: pdu[1...]) else { return false }
        response = features
        return true
    }

    /// The responder's Pairing Public Key; false when it is not a valid one.
    mutating func take(publicKey pdu: [UInt8]) -> Bool {
        guard pdu.first == SMPCode.pairingPublicKey.rawValue, let key = P256PublicKey(smpOctets: pdu.dropFirst()) else { return false }
        peerKey = key
        return true
    }

    mutating func take(confirm pdu: [UInt8]) -> Bool {
        guard pdu.first == SMPCode.pairingConfirm.rawValue, let value = Octets128(leastSignificantFirst: pdu.dropFirst()) else { return false }
        peerConfirm = value
        return true
    }

    /// The responder's Pairing Random: true when it opens the confirm value it committed
    /// to (Cb = f4(PKbx, PKax, Nb, 0)); then the keys are derived.
    mutating func take(random pdu: [UInt8]) -> Bool {
        guard pdu.first == SMPCode.pairingRandom.rawValue, let nb = Octets128(leastSignificantFirst: pdu.dropFirst()),
              let peerKey, let peerConfirm, let dhKey = keyPair.sharedSecret(with: peerKey) else { return false }
        peerNonce = nb
        guard SecurityFunctions.f4(u: peerKey.x, v: keyPair.publicKey.x, x: nb, z: 0) == peerConfirm else { return false }
        (macKey, ltk) = SecurityFunctions.f5(w: dhKey, n1: nonce, n2: nb, a1: address, a2: responderAddress)
        return true
    }

    /// Va, the six digits the phone shows.
    var numericValue: UInt32? {
        guard let peerKey, let peerNonce else { return nil }
        return SecurityFunctions.g2(u: keyPair.publicKey.x, v: peerKey.x, x: nonce, y: peerNonce) % 1_000_000
    }

    /// Ea = f6(MacKey, Na, Nb, rb, IOcapA, A, B).
    var dhKeyCheck: [UInt8] {
        guard let macKey, let peerNonce else { return [SMPCode.pairingDHKeyCheck.rawValue] }
        let ea = SecurityFunctions.f6(w: macKey, n1: nonce, n2: peerNonce, r: .zero, ioCap: request.ioCap, a1: address,
                                      a2: responderAddress)
        return [SMPCode.pairingDHKeyCheck.rawValue] + ea.leastSignificantFirst
    }

    /// Whether `pdu` is the responder's Eb = f6(MacKey, Nb, Na, ra, IOcapB, B, A).
    func verifies(dhKeyCheck pdu: [UInt8]) -> Bool {
        guard let response, let macKey, let peerNonce else { return false }
        let eb = SecurityFunctions.f6(w: macKey, n1: peerNonce, n2: nonce, r: .zero, ioCap: response.ioCap, a1: responderAddress,
                                      a2: address)
        return pdu == [SMPCode.pairingDHKeyCheck.rawValue] + eb.leastSignificantFirst
    }

    var identityInformation: [UInt8] { [SMPCode.identityInformation.rawValue] + irk.revealed.leastSignificantFirst }
    var identityAddressInformation: [UInt8] {
        [SMPCode.identityAddressInformation.rawValue, 0x00] + (0 ..< 6).map { UInt8(truncatingIfNeeded: identityAddress.rawValue >> (8 * UInt64($0))) }
    }
}

/// Fixed keys and nonce for the responder.
struct FixedSecrets: PairingSecrets {
    var pair: P256KeyPair?
    var fixedNonce: Octets128
    func keyPair() -> P256KeyPair? { pair }
    func nonce() -> Octets128 { fixedNonce }
}

enum Fixture {
    static let phoneAddress = AddressWithType(BluetoothAddress("5A:11:22:33:44:55")!, isRandom: true)
    static let doorAddress = AddressWithType(BluetoothAddress("00:1B:DC:0A:0B:0C")!, isRandom: false)
    static let phoneIdentity = BluetoothAddress("F0:99:B6:01:02:03")!
    static let phoneIRK = Octets128(mostSignificantFirst: [0x0F, 0xED, 0xCB, 0xA9, 0x87, 0x65, 0x43, 0x21,
                                                           0x12, 0x34, 0x56, 0x78, 0x9A, 0xBC, 0xDE, 0xF0])!
    static let doorIRK = Octets128(mostSignificantFirst: [0xA1, 0xB2, 0xC3, 0xD4, 0xE5, 0xF6, 0x07, 0x18,
                                                          0x29, 0x3A, 0x4B, 0x5C, 0x6D, 0x7E, 0x8F, 0x90])!
    static let doorIdentity = AddressWithType(BluetoothAddress("C3:44:55:66:77:88")!, isRandom: true)
    /// The debug key pair of Core Vol 3 Part H §2.3.5.6.1 (its private key is published),
    /// which the responder refuses.
    static let debugKeyPair: P256KeyPair = {
        let text = Array("3f49f6d4a3c55f3874c9b3e3d2103f504aff607beb40b7995899b8a6cd3c1abd".utf8)
        let octets = text.withUnsafeBufferPointer { HexText.bytes($0, byteCount: 32) }!
        return P256KeyPair(privateKey: Octets256(mostSignificantFirst: octets)!)!
    }()

    static func configuration(method: PairingMethod = .justWorks, acceptsPairing: Bool = true) -> PairingResponder.Configuration {
        .init(acceptsPairing: acceptsPairing, method: method,
              localIdentity: .init(irk: SecretKey128(doorIRK), address: doorIdentity))
    }

    static func responder(method: PairingMethod = .justWorks, acceptsPairing: Bool = true,
                           secrets: any PairingSecrets = SystemPairingSecrets()) -> PairingResponder {
        PairingResponder(configuration: configuration(method: method, acceptsPairing: acceptsPairing),
                         initiatorAddress: phoneAddress, responderAddress: doorAddress, secrets: secrets)
    }
}

extension [PairingAction] {
    /// The SMP PDUs among the actions, in order.
    var sent: [[UInt8]] { compactMap { if case .send(let pdu) = $0 { pdu } else { nil } } }
    var failure: PairingFailure? { lazy.compactMap { if case .failed(let failure) = $0 { failure } else { nil } }.first }
    var result: PairingResult? { lazy.compactMap { if case .paired(let result) = $0 { result } else { nil } }.first }
    var numericValue: UInt32? { lazy.compactMap { if case .compareNumericValue(let value) = $0 { value } else { nil } }.first }
}
