/// Where the status socket lives, the same rule for `run` and `status`: the first entry
/// of `$RUNTIME_DIRECTORY` (systemd sets it from `RuntimeDirectory=`), else
/// `/run/beacon-gateway`; the file is `status.sock` in it.
public enum StatusSocketPath {
    public static let defaultDirectory = "/run/beacon-gateway"
    public static let fileName = "status.sock"

    public static func resolve(environment: [String: String]) -> String {
        directory(environment: environment) + "/" + fileName
    }

    public static func directory(environment: [String: String]) -> String {
        // systemd joins several RuntimeDirectory= entries with ':'.
        if let value = environment["RUNTIME_DIRECTORY"],
           let first = value.split(separator: ":").first, first.hasPrefix("/") {
            var path = String(first)
            while path.count > 1, path.hasSuffix("/") { path.removeLast() }
            return path
        }
        return defaultDirectory
    }
}

#if canImport(Glibc)
import Glibc
#endif

extension StatusSocketPath {
    /// The rule applied to this process's environment.
    public static func resolve() -> String {
        var environment: [String: String] = [:]
        if let value = getenv("RUNTIME_DIRECTORY") { environment["RUNTIME_DIRECTORY"] = String(cString: value) }
        return resolve(environment: environment)
    }
}

extension StatusSocketPath {
    /// The directory part of a socket path.
    public static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}
