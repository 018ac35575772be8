import HCI

/// Joins incoming ACL fragments into L2CAP basic frames, per connection handle.
///
/// Every byte is the controller's or the peer's, so each PDU is bounded by
/// `maxPDULength` (ATT at MTU 23 needs 27 bytes; 512 leaves room for signalling and
/// SMP): a longer announced length, a continuation without a start or more bytes than
/// announced drop what was pending, are counted, and are reported as errors. Memory is
/// at most one bounded PDU per open connection.
public struct ACLReassembler: Sendable {
    public struct Counters: Hashable, Sendable {
        public var framesDelivered = 0
        public var fragmentsJoined = 0
        public var continuationsWithoutStart = 0
        public var interruptedPDUs = 0
        public var oversizedPDUs = 0
        public var overlongPDUs = 0
        public init() {}
    }

    /// The largest L2CAP payload accepted.
    public let maxPDULength: Int
    public private(set) var counters = Counters()
    private var partials: [UInt16: [UInt8]] = [:]

    public init(maxPDULength: Int = 512) {
        self.maxPDULength = max(maxPDULength, 23)
    }

    /// Bytes held for incomplete PDUs (for tests and statistics).
    public var pendingBytes: Int { partials.values.reduce(0) { $0 + $1.count } }

    /// Takes one fragment; returns a frame when it completes one.
    public mutating func receive(_ header: ACLDataHeader, data: ArraySlice<UInt8>) throws(ACLDataError) -> L2CAPBasicFrame? {
        let handle = header.connectionHandle
        var pending: [UInt8]
        if header.boundary.startsPDU {
            if partials.removeValue(forKey: handle) != nil { counters.interruptedPDUs += 1 }
            pending = []
        } else {
            guard let partial = partials.removeValue(forKey: handle) else {
                counters.continuationsWithoutStart += 1
                throw .continuationWithoutStart(handle)
            }
            counters.fragmentsJoined += 1
            pending = partial
        }
        // Checked before copying: a hostile fragment never grows the buffer past the bound.
        guard pending.count + data.count <= L2CAPBasicFrame.headerSize + maxPDULength else {
            counters.oversizedPDUs += 1
            throw .oversizedPDU(handle: handle, length: pending.count + data.count - L2CAPBasicFrame.headerSize)
        }
        pending.append(contentsOf: data)
        var reader = HCIByteReader(pending, context: .aboveHCI)
        guard let length = try? reader.u16(), let channel = try? reader.u16() else {
            // The basic header itself is split (legal, if odd): wait for the rest.
            partials[handle] = pending
            return nil
        }
        guard Int(length) <= maxPDULength else {
            counters.oversizedPDUs += 1
            throw .oversizedPDU(handle: handle, length: Int(length))
        }
        let total = L2CAPBasicFrame.headerSize + Int(length)
        if pending.count < total {
            partials[handle] = pending
            return nil
        }
        guard pending.count == total else {
            counters.overlongPDUs += 1
            throw .overlongPDU(handle)
        }
        counters.framesDelivered += 1
        return L2CAPBasicFrame(connectionHandle: handle, channel: L2CAPChannelID(rawValue: channel),
                               payload: Array(pending[L2CAPBasicFrame.headerSize...]))
    }

    /// Forgets a connection's partial PDU (disconnection).
    public mutating func drop(handle: UInt16) { partials[handle] = nil }

    /// Forgets everything (controller reset).
    public mutating func reset() { partials.removeAll() }
}
