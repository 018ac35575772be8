import HCI

/// Host-to-controller ACL flow control (Core Vol 4 Part E §4.1.1): the controller has
/// `packetCount` buffers of `packetLength` bytes for LE data (or shares the BR/EDR pool);
/// the host takes a credit before each fragment it sends and gets it back with Number Of
/// Completed Packets, or when the connection is gone.
///
/// Sans-IO: every call returns the fragments that may be sent now, in order. Outgoing
/// L2CAP PDUs are cut into fragments of at most `packetLength` bytes (first
/// non-flushable, then continuing) and queued per connection, a bounded queue each;
/// connections take turns so one busy link cannot starve another. Completions for
/// handles not open, or beyond what a handle has outstanding, are counted and ignored,
/// so the credit count never exceeds what the controller has.
public struct ACLFlowControl: Sendable {
    public struct Counters: Hashable, Sendable {
        public var fragmentsSent = 0
        public var completionsForUnknownHandles = 0
        /// Completed-packet counts above what a handle had outstanding.
        public var excessCompletions = 0
        /// Queued fragments dropped because their connection went away.
        public var fragmentsDroppedOnClose = 0
        /// PDUs refused because the connection's queue was full.
        public var queueOverflows = 0
        public var controllerResets = 0
        public init() {}
    }

    private struct Link {
        var outstanding = 0
        var queue: [HCIPacket] = []
    }

    /// The smallest LE ACL data length a controller may have (Core Vol 6 Part B §2.4).
    public static let minimumPacketLength = 27

    public private(set) var packetLength: Int
    public private(set) var totalCredits: Int
    public private(set) var availableCredits: Int
    public let maxQueuedFragments: Int
    public private(set) var counters = Counters()
    private var links: [UInt16: Link] = [:]
    /// Open handles in the order they take turns.
    private var rotation: [UInt16] = []
    private var nextTurn = 0

    public init(buffer: ACLBufferInfo = ACLBufferInfo(packetLength: 27, packetCount: 1, isShared: false),
                maxQueuedFragments: Int = 64) {
        self.maxQueuedFragments = max(1, maxQueuedFragments)
        (packetLength, totalCredits) = Self.sanitise(buffer)
        availableCredits = totalCredits
    }

    /// A controller announcing zero-sized buffers would wedge the data path; the spec's
    /// minimums keep it moving (the controller then answers with errors we can see).
    private static func sanitise(_ buffer: ACLBufferInfo) -> (length: Int, count: Int) {
        (min(max(buffer.packetLength, minimumPacketLength), Int(UInt16.max)), max(buffer.packetCount, 1))
    }

    // MARK: Connections

    public var openHandles: [UInt16] { rotation }
    public func isOpen(_ handle: UInt16) -> Bool { links[handle] != nil }
    public func outstanding(on handle: UInt16) -> Int { links[handle]?.outstanding ?? 0 }
    public func queuedFragments(on handle: UInt16) -> Int { links[handle]?.queue.count ?? 0 }
    public var outstandingTotal: Int { links.values.reduce(0) { $0 + $1.outstanding } }

    /// A connection completed; opening an open handle again changes nothing.
    public mutating func open(_ handle: UInt16) {
        guard links[handle] == nil else { return }
        links[handle] = Link()
        rotation.append(handle)
    }

    /// Disconnection Complete: the controller has flushed the connection's buffers, so its
    /// outstanding credits come back; its queue is dropped. Returns what may now be sent.
    public mutating func close(_ handle: UInt16) -> [HCIPacket] {
        guard let link = links.removeValue(forKey: handle) else { return [] }
        availableCredits = min(totalCredits, availableCredits + link.outstanding)
        counters.fragmentsDroppedOnClose += link.queue.count
        if let index = rotation.firstIndex(of: handle) {
            rotation.remove(at: index)
            if nextTurn > index { nextTurn -= 1 }
        }
        return pump()
    }

    /// A controller reset (or new bring-up): every connection is gone without any event,
    /// so all are torn down locally and every credit restored, with the buffer sizes the
    /// controller announced this time. Returns the handles that were open.
    @discardableResult
    public mutating func reset(buffer: ACLBufferInfo) -> [UInt16] {
        let torn = rotation
        for link in links.values { counters.fragmentsDroppedOnClose += link.queue.count }
        links.removeAll()
        rotation.removeAll()
        nextTurn = 0
        (packetLength, totalCredits) = Self.sanitise(buffer)
        availableCredits = totalCredits
        counters.controllerResets += 1
        return torn
    }

    // MARK: Data

    /// Fragments an L2CAP PDU for `handle` and queues it; returns what may be sent now.
    public mutating func send(_ pdu: [UInt8], on handle: UInt16) throws(ACLSendError) -> [HCIPacket] {
        guard var link = links[handle] else { throw .notConnected(handle) }
        guard !pdu.isEmpty else { return [] }
        let fragments = (pdu.count + packetLength - 1) / packetLength
        guard link.queue.count + fragments <= maxQueuedFragments else {
            counters.queueOverflows += 1
            throw .queueFull(handle)
        }
        var start = pdu.startIndex
        while start < pdu.endIndex {
            let end = min(start + packetLength, pdu.endIndex)
            let boundary: ACLPacketBoundary = start == pdu.startIndex ? .firstNonFlushable : .continuing
            link.queue.append(ACLDataHeader.packet(handle: handle, boundary: boundary, data: pdu[start ..< end]))
            start = end
        }
        links[handle] = link
        return pump()
    }

    /// Number Of Completed Packets: credits come back, never more than were taken.
    public mutating func completed(_ entries: [HCICompletedPackets]) -> [HCIPacket] {
        for entry in entries {
            let count = Int(entry.count)
            guard var link = links[entry.connectionHandle] else {
                counters.completionsForUnknownHandles += count
                continue
            }
            let returned = min(count, link.outstanding)
            counters.excessCompletions += count - returned
            link.outstanding -= returned
            links[entry.connectionHandle] = link
            availableCredits = min(totalCredits, availableCredits + returned)
        }
        return pump()
    }

    /// Hands out credits to queued fragments, one fragment per connection per turn.
    private mutating func pump() -> [HCIPacket] {
        var sendable = [HCIPacket]()
        var idleTurns = 0
        while availableCredits > 0, !rotation.isEmpty, idleTurns < rotation.count {
            if nextTurn >= rotation.count { nextTurn = 0 }
            let handle = rotation[nextTurn]
            nextTurn += 1
            guard var link = links[handle], !link.queue.isEmpty else {
                idleTurns += 1
                continue
            }
            idleTurns = 0
            sendable.append(link.queue.removeFirst())
            link.outstanding += 1
            links[handle] = link
            availableCredits -= 1
            counters.fragmentsSent += 1
        }
        return sendable
    }
}

public enum ACLSendError: Error, Hashable, Sendable, CustomStringConvertible {
    case notConnected(UInt16)
    /// The connection's queue is full: the peer or the controller is not keeping up.
    case queueFull(UInt16)

    public var description: String {
        switch self {
        case .notConnected(let handle): "no open connection 0x" + String(handle, radix: 16)
        case .queueFull(let handle): "send queue full on 0x" + String(handle, radix: 16)
        }
    }
}
