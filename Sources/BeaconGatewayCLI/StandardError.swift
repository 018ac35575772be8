#if canImport(Glibc)
import Glibc
#endif

/// Writes one line to standard error (messages for people, never machine output).
func printError(_ message: String) {
    var line = message
    line.append("\n")
    line.withUTF8 { buffer in
        var offset = 0
        while offset < buffer.count {
            let written = write(2, buffer.baseAddress! + offset, buffer.count - offset)
            if written <= 0 { break }
            offset += written
        }
    }
}
