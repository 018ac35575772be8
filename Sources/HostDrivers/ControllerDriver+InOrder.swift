import HCI
import Host

extension ControllerDriver {
    /// Submits `commands` one after the other, each once the one before it succeeded (a
    /// peripheral mode putting its advertising on air); the first refused or unanswered
    /// one stops the rest and is handed to `refused` as a sentence. Not recovered by a
    /// reset on timeout: the caller decides what a refusal ends.
    public func submitInOrder(_ commands: [(HCIPacket, Opcode)], refused: @escaping (String) -> Void) {
        guard let (packet, opcode) = commands.first else { return }
        submit(packet: packet, opcode: opcode, recoverOnTimeout: false) { [unowned self] outcome, _ in
            switch outcome {
            case .completed(let status, _) where status == .success:
                self.submitInOrder(Array(commands.dropFirst()), refused: refused)
            default:
                refused("the controller refused to advertise (opcode 0x\(String(opcode.rawValue, radix: 16)): \(outcome))")
            }
        }
    }
}
