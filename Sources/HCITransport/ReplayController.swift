import HCI

/// The controller a btsnoop replay pretends to be, towards the host: it answers every
/// command with success and notices when the host starts scanning. Sans-IO: bytes in,
/// bytes out.
struct ReplayController {
    private struct Opcode: RawRepresentable, Hashable {
        var rawValue: UInt16
        static let reset = Opcode(rawValue: 0x0C03)
        static let readLocalVersionInformation = Opcode(rawValue: 0x1001)
        static let readLocalSupportedCommands = Opcode(rawValue: 0x1002)
        static let readLocalSupportedFeatures = Opcode(rawValue: 0x1003)
        static let readBufferSize = Opcode(rawValue: 0x1005)
        static let readBDAddr = Opcode(rawValue: 0x1009)
        static let leReadBufferSize = Opcode(rawValue: 0x2002)
        static let leReadLocalSupportedFeatures = Opcode(rawValue: 0x2003)
        static let leSetScanEnable = Opcode(rawValue: 0x200C)
        static let leReadFilterAcceptListSize = Opcode(rawValue: 0x200F)
        static let leReadSupportedStates = Opcode(rawValue: 0x201C)
        static let leSetExtendedScanEnable = Opcode(rawValue: 0x2042)
        static let leReadBufferSizeV2 = Opcode(rawValue: 0x2060)
    }

    private enum EventCode {
        static let commandComplete: UInt8 = 0x0E
        static let commandStatus: UInt8 = 0x0F
    }

    /// Return-parameter lengths of Command Complete, *including* the status byte (Core
    /// spec v5.4, Vol 4, Part E, §7), for the commands of bring-up and scanning. Every
    /// other command is answered with the status alone, which is all a setter returns.
    private static let returnParameterLengths: [Opcode: Int] = [
        .reset: 1,
        .readLocalVersionInformation: 9, // version, revision(2), LMP version, company(2), LMP subversion(2)
        .readLocalSupportedCommands: 65, // 64-octet bit mask
        .readLocalSupportedFeatures: 9, // 8-octet LMP features
        .readBDAddr: 7, // 6-octet address
        .readBufferSize: 8, // ACL length(2), SCO length(1), ACL count(2), SCO count(2)
        .leReadBufferSize: 4, // LE ACL length(2), LE ACL count(1)
        .leReadBufferSizeV2: 7, // as above, then ISO length(2), ISO count(1)
        .leReadLocalSupportedFeatures: 9, // 8-octet LE features
        .leReadSupportedStates: 9, // 8-octet states
        .leReadFilterAcceptListSize: 2, // size(1)
    ]

    private static let statusSuccess: UInt8 = 0x00
    /// Num_HCI_Command_Packets: one command at a time, as a real controller usually allows.
    private static let commandCredits: UInt8 = 1

    /// Latched by the first scan enable; see `BTSnoopReplayTransport`.
    private(set) var scanningEnabled = false

    /// The answer to a command from the host; `nil` for a packet that is no command
    /// (host ACL data is swallowed) or too short to hold an opcode.
    mutating func answer(_ packet: HCIPacket) -> HCIPacket? {
        guard packet.type == .command, packet.payload.count >= 3 else { return nil }
        let opcode = Opcode(rawValue: UInt16(packet.payload[0]) | UInt16(packet.payload[1]) << 8)
        if opcode == .leSetScanEnable || opcode == .leSetExtendedScanEnable {
            // The first parameter of both is Enable; the third byte of the payload is the
            // parameter length.
            if packet.payload.count >= 4 && packet.payload[3] == 0x01 { scanningEnabled = true }
        }
        let length = Self.returnParameterLengths[opcode] ?? 1
        var payload: [UInt8] = [EventCode.commandComplete, UInt8(3 + length), Self.commandCredits,
                                UInt8(truncatingIfNeeded: opcode.rawValue), UInt8(truncatingIfNeeded: opcode.rawValue >> 8),
                                Self.statusSuccess]
        payload.append(contentsOf: repeatElement(0, count: length - 1))
        return HCIPacket(type: .event, payload: payload)
    }

    /// Whether a recorded packet goes to the host: only what the controller sent, and not
    /// the answers to commands this host never sent.
    static func shouldReplay(_ record: BTSnoop.Record) -> Bool {
        guard record.direction == .controllerToHost else { return false }
        if record.packet.type == .event, let code = record.packet.payload.first,
           code == EventCode.commandComplete || code == EventCode.commandStatus {
            return false
        }
        return true
    }
}
