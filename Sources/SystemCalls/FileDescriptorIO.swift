#if canImport(Glibc)
import Glibc
#endif

/// Whole writes and bounded whole reads on a blocking descriptor.
public enum FileDescriptorIO {
    /// Writes every byte, however many calls it takes. A write that takes nothing is a
    /// full device (ENOSPC), never a reason to spin.
    public static func writeAll(_ fd: Int32, _ bytes: some Collection<UInt8>) throws(Errno) {
        var failure: Errno?
        let done: Void? = bytes.withContiguousStorageIfAvailable { buffer in
            failure = writeAll(fd, UnsafeRawBufferPointer(buffer))
        }
        if done == nil { failure = Array(bytes).withUnsafeBytes { writeAll(fd, $0) } }
        if let failure { throw failure }
    }

    private static func writeAll(_ fd: Int32, _ buffer: UnsafeRawBufferPointer) -> Errno? {
        var offset = 0
        while offset < buffer.count, let base = buffer.baseAddress {
            let written = SystemCall.retryingInterrupts { write(fd, base + offset, buffer.count - offset) }
            if written < 0 { return .current }
            if written == 0 { return Errno(ENOSPC) }
            offset += written
        }
        return nil
    }

    /// Reads until the end or until `limit` bytes, whichever comes first. Ask for one byte
    /// more than a file may hold to learn whether it is longer: a file the agent reads is
    /// bounded by what it may hold, so a planted or corrupted huge file costs no memory.
    public static func read(_ fd: Int32, upTo limit: Int) throws(Errno) -> [UInt8] {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: max(1, min(65536, limit)))
        while bytes.count < limit {
            let wanted = min(chunk.count, limit - bytes.count)
            let count = SystemCall.retryingInterrupts {
                chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, wanted) }
            }
            if count < 0 { throw .current }
            if count == 0 { break }
            bytes += chunk[0 ..< count]
        }
        return bytes
    }
}
