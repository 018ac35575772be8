#if canImport(Glibc)
import Glibc
#endif
import SystemCalls

/// `server.ca_file` *adds* a CA (see docs/event-api.md): libcurl is given the system bundle and the
/// file together, so the server may use either a public or a private CA.
enum CABundle {
    /// Where Debian (and Raspberry Pi OS) keep the system's trusted CAs.
    static let systemBundlePaths = ["/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt"]
    static let maximumSize = 4 << 20

    static func load(caFile: String) throws(ForwarderError) -> [UInt8] {
        guard let extra = read(caFile) else {
            throw .caFile(path: caFile, reason: "cannot be read (\(String(cString: strerror(errno))))")
        }
        guard extra.count <= maximumSize else { throw .caFile(path: caFile, reason: "is larger than 4 MiB") }
        guard contains(extra, Array("-----BEGIN CERTIFICATE-----".utf8)) else {
            throw .caFile(path: caFile, reason: "holds no PEM certificate (-----BEGIN CERTIFICATE-----)")
        }
        var bundle: [UInt8] = []
        for path in systemBundlePaths {
            if let system = read(path), system.count <= maximumSize {
                bundle = system
                break
            }
        }
        if let last = bundle.last, last != 0x0A { bundle.append(0x0A) }
        return bundle + extra
    }

    private static func read(_ path: String) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        // One byte past the limit tells the caller the bundle is too large.
        return try? FileDescriptorIO.read(fd, upTo: maximumSize + 1)
    }

    private static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard haystack.count >= needle.count else { return false }
        for start in 0 ... (haystack.count - needle.count) where haystack[start] == needle[0] {
            if haystack[start ..< start + needle.count].elementsEqual(needle) { return true }
        }
        return false
    }
}
