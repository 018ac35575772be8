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

/// Writes a problem that ends the command to standard error. Under systemd (`run` as the
/// service) every line carries the error priority prefix, so the journal keeps it as an
/// error and `journalctl -p err` shows why the agent stopped; on a terminal it is
/// `printError`.
public func printFailure(_ message: String, journalPrefixes: Bool = LogSink.stderrIsJournal()) {
    guard journalPrefixes else { return printError(message) }
    printError(message.split(separator: "\n", omittingEmptySubsequences: false).map { "<3>\($0)" }.joined(separator: "\n"))
}

/// Writes all of `text` to standard output, unbuffered: the table and JSON lines of
/// `scan` must appear when they are made, not when a buffer fills.
public func writeStandardOutput(_ text: String) {
    var text = text
    // A closed pipe (`scan | head`) ends the output, not the command.
    text.withUTF8 { buffer in try? FileDescriptorIO.writeAll(1, buffer) }
}
