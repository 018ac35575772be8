import EventLoop
import HCI

/// The host side of HCI command flow control.
///
/// Commands wait in a FIFO queue and go out while the controller grants credits
/// (Num_HCI_Command_Packets: 1 at start; each Command Complete/Status sets the
/// current allowance, 0 stops sending until a later event grants some). Answers are
/// matched to the outstanding command by opcode, so two commands with the same opcode
/// are never outstanding at once. Each sent command has a deadline; so has a queue
/// that stays starved of credits, or a controller that stops granting them would
/// hang the host silently.
public struct HCICommandFlow: Sendable {
    /// Who sent a command, so its answer can be routed.
    public enum Origin: Hashable, Sendable {
        /// The host's own bring-up, scanning and probe steps.
        case host
        /// A client of the host (connections, advertising), identified by its token.
        case client(token: UInt64, recoverOnTimeout: Bool)
    }

    public struct Entry: Sendable {
        public var opcode: Opcode
        public var packet: HCIPacket
        public var origin: Origin
        /// Set when sent.
        public var deadline: Instant?
    }

    /// What ran out of time.
    public enum Expiry: Sendable {
        case command(Entry)
        /// Commands waited for credits the controller never granted.
        case creditStarvation(waiting: Int)
    }

    public let timeout: Duration
    public private(set) var credits = 1
    private var queue: [Entry] = []
    public private(set) var outstanding: [Entry] = []
    private var starvedSince: Instant?

    public init(timeout: Duration) { self.timeout = timeout }

    public var queuedCount: Int { queue.count }
    public var isIdle: Bool { queue.isEmpty && outstanding.isEmpty }

    public mutating func enqueue(_ packet: HCIPacket, opcode: Opcode, origin: Origin) {
        queue.append(Entry(opcode: opcode, packet: packet, origin: origin, deadline: nil))
    }

    /// The packets that may go out now, in order; they become outstanding.
    public mutating func takeSendable(now: Instant) -> [HCIPacket] {
        var packets = [HCIPacket]()
        while credits > 0, let head = queue.first, !outstanding.contains(where: { $0.opcode == head.opcode }) {
            var entry = queue.removeFirst()
            entry.deadline = now + timeout
            outstanding.append(entry)
            credits -= 1
            packets.append(entry.packet)
        }
        if credits <= 0, !queue.isEmpty {
            if starvedSince == nil { starvedSince = now }
        } else {
            starvedSince = nil
        }
        return packets
    }

    /// Takes the answer (Command Complete or Status) to `opcode` with the credits it
    /// grants. Returns the command it answers, or `nil` when none is outstanding
    /// (a late answer after a timeout, or a controller's spontaneous credit grant).
    public mutating func receiveAnswer(opcode: Opcode, numberOfCommandPackets: UInt8, now: Instant) -> Entry? {
        grantCredits(numberOfCommandPackets, now: now)
        guard let index = outstanding.firstIndex(where: { $0.opcode == opcode }) else { return nil }
        return outstanding.remove(at: index)
    }

    private mutating func grantCredits(_ count: UInt8, now: Instant) {
        credits = Int(count)
        if credits > 0 { starvedSince = nil } else if !queue.isEmpty, starvedSince == nil { starvedSince = now }
    }

    public var nextDeadline: Instant? {
        var earliest = starvedSince.map { $0 + timeout }
        for entry in outstanding {
            if let deadline = entry.deadline, earliest.map({ deadline < $0 }) ?? true { earliest = deadline }
        }
        return earliest
    }

    /// Removes and returns the earliest expiry at `now`, if any.
    public mutating func takeExpired(now: Instant) -> Expiry? {
        if let index = outstanding.indices.min(by: { (outstanding[$0].deadline ?? now) < (outstanding[$1].deadline ?? now) }),
           let deadline = outstanding[index].deadline, deadline <= now {
            let entry = outstanding.remove(at: index)
            return .command(entry)
        }
        if let since = starvedSince, since + timeout <= now {
            starvedSince = nil
            return .creditStarvation(waiting: queue.count)
        }
        return nil
    }

    /// After a command timed out without taking the whole host down: its credit is
    /// presumed lost with it, so the flow may carry on.
    public mutating func restoreCreditAfterLoss() {
        if credits < 1 { credits = 1 }
    }

    /// Drops everything (the controller is being reset); returns what was dropped.
    public mutating func flush() -> [Entry] {
        let dropped = outstanding + queue
        outstanding.removeAll()
        queue.removeAll()
        credits = 1
        starvedSince = nil
        return dropped
    }
}
