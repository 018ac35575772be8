/// When the bytes a framer holds arrived, read by read: the user channel's kernel stamps
/// each packet as the controller delivers it (SO_TIMESTAMP), and a packet read a second
/// later, after reports were let gather (`ReadGathering`), still counts at the time it
/// arrived (docs/presence.md, "The signal").
///
/// Kept by bytes, not by packets, so bytes the framer skips (a framing error) cannot put
/// the stamps out of step with the packets: the packet at the framer's front has the stamp
/// of the read its first byte came with.
struct ArrivalMarks {
    private var byteCounts: [Int] = []
    private var stamps: [Int64] = []
    private var head = 0

    /// A read brought `byteCount` bytes stamped `stampMicroseconds` (CLOCK_REALTIME; 0:
    /// not stamped).
    mutating func read(byteCount: Int, stampMicroseconds: Int64) {
        guard byteCount > 0 else { return }
        if head == byteCounts.count {
            byteCounts.removeAll(keepingCapacity: true)
            stamps.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 64 {
            // Bytes of an unfinished packet stay: the marks before them go.
            byteCounts.removeFirst(head)
            stamps.removeFirst(head)
            head = 0
        }
        byteCounts.append(byteCount)
        stamps.append(stampMicroseconds)
    }

    /// The stamp of the oldest bytes held (the framer's next packet); nil when none is
    /// known.
    var frontStamp: Int64? {
        guard head < stamps.count, stamps[head] != 0 else { return nil }
        return stamps[head]
    }

    /// The framer gave up `count` bytes from its front (a packet, or bytes skipped).
    mutating func consume(_ count: Int) {
        var left = count
        while left > 0, head < byteCounts.count {
            let taken = min(left, byteCounts[head])
            byteCounts[head] -= taken
            left -= taken
            if byteCounts[head] == 0 { head += 1 }
        }
    }

    /// The framer was emptied.
    mutating func reset() {
        byteCounts.removeAll(keepingCapacity: true)
        stamps.removeAll(keepingCapacity: true)
        head = 0
    }
}
