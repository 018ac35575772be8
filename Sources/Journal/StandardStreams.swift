#if canImport(Glibc)
import Glibc
#endif
import SystemCalls

/// Writes one line to standard error (messages for people, never machine output).
public func printError(_ message: String) {
    var line = message
    line.append("\n")
    // Nowhere to say that standard error failed.
    line.withUTF8 { buffer in try? FileDescriptorIO.writeAll(2, buffer) }
}

/// Writes all of `text` to standard output, unbuffered: the table and JSON lines of
/// `scan` must appear when they are made, not when a buffer fills.
public func writeStandardOutput(_ text: String) {
    var text = text
    // A closed pipe (`scan | head`) ends the output, not the command.
    text.withUTF8 { buffer in try? FileDescriptorIO.writeAll(1, buffer) }
}
