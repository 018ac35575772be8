import BluetoothCrypto
import HCI
@testable import SecurityManager

/// The scripted attacks on enrolment's pairing (docs/security.md, "Who can do what, from
/// where"; docs/pairing.md, "What it refuses"), as seeds for the robustness test: each is a
/// genuine pairing altered at one point, with the end it must reach. Unaltered, a seed must
/// end exactly so; the fuzzer also runs each with hostile inputs mixed in, where only the
/// invariants hold.
struct PairingAttack {
    enum Input {
        /// The genuine pairing's step (`PairingRobustnessTests.genuine`).
        case genuine(Int)
        /// A PDU the phone sends instead, made from its state.
        case pdu((ScriptedInitiator) -> [UInt8])
        /// The installer's answer to the six digits.
        case answer(Bool)
    }

    var name: String
    var method: PairingMethod
    var ioCapability: IOCapability = .displayYesNo
    var authentication: AuthenticationRequirements = [.bonding, .mitm, .secureConnections]
    var debugKey = false
    var inputs: [Input]
    /// How it must end unaltered: nil for a completed pairing.
    var failure: PairingFailure?
    /// For a completed pairing: whether the identity must come without an IRK.
    var withoutIRK = false

    /// The genuine pairing's nine steps, then `tail`.
    static func genuine(through last: Int, then tail: [Input] = []) -> [Input] {
        (0 ... last).map { .genuine($0) } + tail
    }

    static var all: [PairingAttack] { [
        PairingAttack(name: "genuine numeric comparison", method: .numericComparison, inputs: genuine(through: 8)),
        PairingAttack(name: "a phone that cannot compare, in a digits window", method: .numericComparison,
                      ioCapability: .noInputNoOutput, authentication: [.bonding, .secureConnections],
                      inputs: genuine(through: 8), failure: .refused(.cannotCompareDigits(.noInputNoOutput))),
        PairingAttack(name: "a phone that claims a keyboard only, in a digits window", method: .numericComparison,
                      ioCapability: .keyboardOnly, inputs: genuine(through: 8), failure: .refused(.cannotCompareDigits(.keyboardOnly))),
        PairingAttack(name: "the installer's no", method: .numericComparison,
                      inputs: genuine(through: 2, then: [.answer(false)] + (4 ... 8).map { .genuine($0) }),
                      failure: .refused(.numericValueRejected)),
        PairingAttack(name: "legacy pairing only", method: .justWorks, authentication: [.bonding],
                      inputs: genuine(through: 8), failure: .refused(.legacyPairing)),
        PairingAttack(name: "a 7-octet key", method: .justWorks,
                      inputs: [.pdu { phone in var pdu = phone.pairingRequest; pdu[4] = 7; return pdu }]
                          + (1 ... 8).map { .genuine($0) },
                      failure: .refused(.encryptionKeyTooShort(7))),
        PairingAttack(name: "the specification's debug key", method: .justWorks, debugKey: true,
                      inputs: genuine(through: 8), failure: .refused(.debugPublicKey)),
        PairingAttack(name: "a public key off the curve", method: .justWorks,
                      inputs: [.genuine(0), .pdu { _ in [SMPCode.pairingPublicKey.rawValue] + Array(repeating: 0x01, count: 64) }]
                          + (2 ... 8).map { .genuine($0) },
                      failure: .refused(.invalidPublicKey)),
        PairingAttack(name: "a wrong DHKey check", method: .justWorks,
                      inputs: genuine(through: 3, then: [.pdu { phone in var pdu = phone.dhKeyCheck; if pdu.count > 1 { pdu[1] ^= 0x01 }; return pdu }]
                          + (5 ... 8).map { .genuine($0) }),
                      failure: .refused(.dhKeyCheckMismatch)),
        PairingAttack(name: "its keys before the link is encrypted", method: .justWorks,
                      inputs: genuine(through: 4, then: [.genuine(7), .genuine(8), .genuine(5), .genuine(6)]),
                      failure: .refused(.unexpected(.identityInformation))),
        PairingAttack(name: "a resolvable private address as its identity", method: .justWorks,
                      inputs: genuine(through: 7, then: [.pdu { _ in [SMPCode.identityAddressInformation.rawValue, 0x01, 0x66, 0x55, 0x44, 0x33, 0x22, 0x51] }]),
                      failure: .refused(.invalidParameters(.identityAddressInformation))),
        PairingAttack(name: "an all-zero IRK", method: .justWorks,
                      inputs: genuine(through: 6, then: [.pdu { _ in [SMPCode.identityInformation.rawValue] + Array(repeating: 0, count: 16) }, .genuine(8)]),
                      withoutIRK: true),
        PairingAttack(name: "a second Pairing Request mid-pairing", method: .justWorks,
                      inputs: genuine(through: 1, then: [.genuine(0)] + (2 ... 8).map { .genuine($0) }),
                      failure: .refused(.unexpected(.pairingRequest))),
    ] }
}
