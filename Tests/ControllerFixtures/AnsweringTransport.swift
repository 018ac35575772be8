import EventLoop
import HCI
import HCITransport

/// A transport that is its own controller, in memory: every command is answered at once
/// with success (Command Complete of zeroed return parameters, or Command Status), unless
/// the test makes its opcode fail or go unanswered. Without a descriptor, the loop reads
/// it while it holds answers.
public final class AnsweringTransport: HCITransport {
    public init() {}

    /// Opcodes never answered.
    public var silentOpcodes: Set<Opcode> = []
    /// Opcodes answered with this error status.
    public var failingOpcodes: [Opcode: HCIStatus] = [:]
    /// The next `receive()` fails as a connection that went away.
    public var failNextReceive = false
    /// Return parameters (status first) for these opcodes instead of zeroes.
    public var returnParameters: [Opcode: [UInt8]] = [:]
    /// Everything the host sent that is not a command (ACL data), in order.
    public private(set) var sentData: [HCIPacket] = []
    public private(set) var opens = 0
    public private(set) var received: [Opcode] = []
    private var inbox: [HCIPacket] = []

    public var name: String { "answering" }
    public private(set) var isOpen = false
    public func open() throws(TransportError) {
        opens += 1
        isOpen = true
    }
    public func close() {
        isOpen = false
        inbox.removeAll()
        ages.removeAll()
    }
    public var fileDescriptor: Int32? { nil }
    public var hasPendingInput: Bool { isOpen && (failNextReceive || !inbox.isEmpty) }
    public func receive() throws(TransportError) -> [HCIPacket] {
        if failNextReceive {
            failNextReceive = false
            throw .closed
        }
        defer {
            inbox.removeAll()
            ages.removeAll()
        }
        return inbox
    }
    public var hasPendingOutput: Bool { false }
    public func flush() throws(TransportError) {}
    public var framingErrors: Int { 0 }
    public var isExhausted: Bool { false }

    /// Delivers a packet as if the controller sent it, `age` before it is read.
    public func inject(_ packet: HCIPacket, age: Duration = .zero) {
        inbox.append(packet)
        ages.append(age)
    }
    private var ages: [Duration] = []
    public private(set) var offeredPacketAge: Duration = .zero

    /// Offers the inbox in place, each packet with the age it was injected with, as the
    /// user channel offers its stamped packets.
    public func receive(
        offering take: (HCIPacketType, UnsafeBufferPointer<UInt8>) -> Bool
    ) throws(TransportError) -> (taken: Int, rest: [HCIPacket]) {
        if failNextReceive {
            failNextReceive = false
            throw .closed
        }
        var taken = 0
        while taken < inbox.count {
            offeredPacketAge = taken < ages.count ? ages[taken] : .zero
            let packet = inbox[taken]
            guard packet.payload.withUnsafeBufferPointer({ take(packet.type, $0) }) else { break }
            taken += 1
        }
        offeredPacketAge = .zero
        let rest = Array(inbox[taken...])
        inbox.removeAll()
        ages.removeAll()
        return (taken, rest)
    }

    public func send(_ packet: HCIPacket) throws(TransportError) {
        guard packet.type == .command, let (opcode, _) = try? HCICommandPacket.split(packet) else {
            sentData.append(packet)
            return
        }
        received.append(opcode)
        if silentOpcodes.contains(opcode) { return }
        let status = failingOpcodes[opcode] ?? .success
        switch opcode.expectedResponse {
        case .commandStatus?:
            inbox.append(HCIEvent.commandStatus(HCICommandStatus(status: status, numberOfCommandPackets: 1, opcode: opcode)).packet)
        case .commandComplete(let length)?:
            let parameters = status == .success ? returnParameters[opcode] ?? ([status.rawValue] + [UInt8](repeating: 0, count: max(length - 1, 0)))
                : [status.rawValue]
            inbox.append(HCIEvent.commandComplete(HCICommandComplete(
                numberOfCommandPackets: 1, opcode: opcode, returnParameters: parameters[...])).packet)
        case nil:
            inbox.append(HCIEvent.commandComplete(HCICommandComplete(
                numberOfCommandPackets: 1, opcode: opcode, returnParameters: [HCIStatus.unknownCommand.rawValue])).packet)
        }
    }
}
