import BluetoothCrypto
import HCI

/// An SMP PDU from the peer, its length checked against its code (Core Vol 3 Part H §3.5,
/// §3.6). Field values are checked where they are used.
enum SMPCommand: Sendable {
    case pairingRequest(PairingFeatures)
    case pairingConfirm(Octets128)
    case pairingRandom(Octets128)
    case pairingFailed(PairingFailedReason)
    case pairingPublicKey(ArraySlice<UInt8>)
    case pairingDHKeyCheck(Octets128)
    case identityInformation(Octets128)
    /// Address type octet (0x00 public, 0x01 random, others reserved) and the address.
    case identityAddressInformation(type: UInt8, BluetoothAddress)
    /// A well-formed command this responder never takes at any step (Pairing Response,
    /// Security Request, Keypress Notification) or only when negotiated (the legacy and
    /// signing keys, never negotiated here).
    case other(SMPCode)

    enum Malformed: Error, Sendable {
        case empty
        case reservedCode(SMPCode)
        case wrongLength(SMPCode)
    }

    static func parse(_ pdu: [UInt8]) -> Result<SMPCommand, Malformed> {
        guard let first = pdu.first else { return .failure(.empty) }
        let code = SMPCode(rawValue: first)
        guard let length = code.pduLength else { return .failure(.reservedCode(code)) }
        guard pdu.count == length else { return .failure(.wrongLength(code)) }
        let parameters = pdu[1...]
        switch code {
        case .pairingRequest: return .success(.pairingRequest(PairingFeatures(parameters: parameters)!))
        case .pairingConfirm: return .success(.pairingConfirm(Octets128(leastSignificantFirst: parameters)!))
        case .pairingRandom: return .success(.pairingRandom(Octets128(leastSignificantFirst: parameters)!))
        case .pairingFailed: return .success(.pairingFailed(PairingFailedReason(rawValue: pdu[1])))
        case .pairingPublicKey: return .success(.pairingPublicKey(parameters))
        case .pairingDHKeyCheck: return .success(.pairingDHKeyCheck(Octets128(leastSignificantFirst: parameters)!))
        case .identityInformation: return .success(.identityInformation(Octets128(leastSignificantFirst: parameters)!))
        case .identityAddressInformation:
            let address = parameters.dropFirst().reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            return .success(.identityAddressInformation(type: pdu[1], BluetoothAddress(rawValue: address)))
        default: return .success(.other(code))
        }
    }
}
