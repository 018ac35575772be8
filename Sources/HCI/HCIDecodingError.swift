/// Why bytes from a controller (or a capture) could not be decoded. Every case is
/// counted by the caller; none of them stops the stream.
public enum HCIDecodingError: Error, Hashable, Sendable {
    /// Where in the packet the problem was found.
    public enum Context: Hashable, Sendable {
        case event(EventCode)
        case leSubevent(LESubeventCode)
        case command(Opcode)
        case returnParameters(Opcode)
        case packetHeader
        /// Bytes of a layer above HCI (ACL payloads, persisted state) read with
        /// `HCIByteReader`; those layers turn a failed read into their own errors.
        case aboveHCI
    }

    /// Decoding an event from a packet that is not an event.
    case wrongPacketType(HCIPacketType)
    /// The header's parameter length disagrees with the bytes that came.
    case lengthMismatch(Context, declared: Int, actual: Int)
    /// The parameters end before a field.
    case truncated(Context, needed: Int, available: Int)
    /// A count (reports, handles, sets) that the remaining bytes cannot hold.
    case countDoesNotFit(Context, count: Int)
    /// A variable-length field (advertising data) runs past the end of the packet.
    case dataRunsPastEnd(Context, report: Int)
    /// Bytes left over after the last report of a list.
    case trailingBytes(Context, count: Int)
    /// A field holding a value the specification forbids.
    case invalidValue(Context, field: Field, value: Int)
    /// A command decoded from a packet with another opcode.
    case opcodeMismatch(expected: Opcode, actual: Opcode)

    public enum Field: Hashable, Sendable {
        case legacyEventType, dataLength, phys, numberOfSets
    }
}
