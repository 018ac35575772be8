#if canImport(Glibc)
import Glibc
#endif

/// Writes one line to standard error (messages for people, never machine output).
public func printError(_ message: String) {
    var line = message
    line.append("\n")
    line.withUTF8 { buffer in
        var offset = 0
        while offset < buffer.count {
            let written = write(2, buffer.baseAddress! + offset, buffer.count - offset)
            if written < 0 && errno == EINTR { continue }
            if written <= 0 { break }
            offset += written
        }
    }
}

/// Writes all of `text` to standard output, unbuffered: the table and JSON lines of
/// `scan` must appear when they are made, not when a buffer fills.
public func writeStandardOutput(_ text: String) {
    var text = text
    text.withUTF8 { buffer in
        var offset = 0
        while offset < buffer.count {
            let written = write(1, buffer.baseAddress! + offset, buffer.count - offset)
            if written < 0 && errno == EINTR { continue }
            if written <= 0 { break }
            offset += written
        }
    }
}
