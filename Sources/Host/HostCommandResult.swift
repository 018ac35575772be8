import HCI

/// The outcome of a command a client submitted.
public struct HostCommandResult: Sendable {
    public enum Outcome: Sendable {
        /// Command Complete: status first, then the return parameters.
        case completed(status: HCIStatus, returnParameters: ArraySlice<UInt8>)
        /// Command Status (the outcome proper comes later as an event).
        case status(HCIStatus)
        case timedOut
        /// Dropped unanswered because the controller is being reset.
        case flushed
        case notSent(NotSentReason)
    }

    public enum NotSentReason: Hashable, Sendable {
        /// Only while scanning does the host take commands from clients.
        case controllerNotReady
        /// A command of the other advertising/scanning family: never mixed.
        case wrongCommandFamily(CommandFamily)
    }

    public var token: UInt64
    public var opcode: Opcode
    public var outcome: Outcome
}
