import HCI

/// Walks a btsnoop byte stream ahead of `BTSnoopParser` and clears the top bit of every
/// record's timestamp.
///
/// The parser converts a timestamp with a trapping `Int64` subtraction, so a record whose
/// timestamp has its top bit set (a corrupt or hostile file: that is 292,000 years after
/// year 0) would crash the process. Replay ignores timestamps, so clamping them costs
/// nothing. Streaming, O(1) memory; it only needs to be right for records the parser will
/// accept, because the parser stops at the first impossible length before it reads a
/// timestamp.
struct BTSnoopTimestampGuard {
    private enum Phase {
        case fileHeader(remaining: Int)
        case recordHeader(index: Int, includedLength: Int)
        case body(remaining: Int)
    }

    private static let includedLengthRange = 4 ..< 8
    private static let timestampFirstByte = 16

    private var phase = Phase.fileHeader(remaining: BTSnoop.headerLength)

    mutating func process(_ bytes: inout [UInt8], count: Int) {
        var index = 0
        let end = min(count, bytes.count)
        while index < end {
            switch phase {
            case .fileHeader(let remaining):
                let step = min(remaining, end - index)
                index += step
                phase = remaining == step ? .recordHeader(index: 0, includedLength: 0) : .fileHeader(remaining: remaining - step)
            case .body(let remaining):
                let step = min(remaining, end - index)
                index += step
                phase = remaining == step ? .recordHeader(index: 0, includedLength: 0) : .body(remaining: remaining - step)
            case .recordHeader(let headerIndex, var includedLength):
                if Self.includedLengthRange.contains(headerIndex) {
                    // At most 32 bits: cannot overflow `Int` on the 64-bit targets this runs on.
                    includedLength = includedLength << 8 | Int(bytes[index])
                } else if headerIndex == Self.timestampFirstByte {
                    bytes[index] &= 0x7F
                }
                index += 1
                if headerIndex + 1 == BTSnoop.recordHeaderLength {
                    phase = includedLength == 0 ? .recordHeader(index: 0, includedLength: 0) : .body(remaining: includedLength)
                } else {
                    phase = .recordHeader(index: headerIndex + 1, includedLength: includedLength)
                }
            }
        }
    }
}
