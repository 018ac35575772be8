import HCI

/// What `--capture` leaves out unless `--capture-keys` is given (docs/security.md,
/// "Secrets"): the keys a pairing hands over and the LTK given to the controller. The
/// packets keep their length and shape, the key octets become zeros, so a capture still
/// replays and still shows that a key went by.
public enum CaptureRedaction {
    /// LE Long Term Key Request Reply: handle (2), LTK (16).
    static let longTermKeyRequestReply: UInt16 = 0x201A
    /// LE Enable Encryption: handle (2), random (8), EDIV (2), LTK (16).
    static let enableEncryption: UInt16 = 0x2019
    /// SMP over L2CAP's fixed channel 0x0006: the key distribution PDUs, by code, and the
    /// octets after the code that are secret: Encryption Information (LTK), Central
    /// Identification (EDIV, Rand), Identity Information (IRK), Signing Information (CSRK).
    static let smpChannel: UInt16 = 0x0006
    static let secretSMPCodes: Set<UInt8> = [0x06, 0x07, 0x08, 0x0A]

    /// `packet` with its key octets zeroed; unchanged when it carries none.
    public static func redacted(_ packet: HCIPacket) -> HCIPacket {
        var bytes = packet.payload
        switch packet.type {
        case .command:
            guard bytes.count >= 3 else { return packet }
            let opcode = UInt16(bytes[0]) | UInt16(bytes[1]) << 8
            // Parameters start after the opcode and the length octet.
            let keyAt: Int? = switch opcode {
            case longTermKeyRequestReply: 3 + 2
            case enableEncryption: 3 + 2 + 8 + 2
            default: nil
            }
            guard let keyAt else { return packet }
            zero(&bytes, from: keyAt, count: 16)
        case .acl:
            // A first fragment (PB 0b00 or 0b10) with its L2CAP header: handle+flags (2),
            // length (2), then L2CAP length (2), channel (2), the SMP code. Key PDUs are at
            // most 17 octets: never fragmented on a controller's 27-octet buffers.
            guard bytes.count >= 9, bytes[1] & 0x30 != 0x10 else { return packet }
            let channel = UInt16(bytes[6]) | UInt16(bytes[7]) << 8
            guard channel == smpChannel, secretSMPCodes.contains(bytes[8]) else { return packet }
            zero(&bytes, from: 9, count: bytes.count - 9)
        default:
            return packet
        }
        return HCIPacket(type: packet.type, payload: bytes)
    }

    private static func zero(_ bytes: inout [UInt8], from start: Int, count: Int) {
        guard start < bytes.count else { return }
        for index in start ..< min(bytes.count, start + count) { bytes[index] = 0 }
    }
}
