import CMosquitto

/// Eclipse's libmosquitto, the MQTT client under the site bus (docs/site-bus.md; README
/// says why this library): initialised once per process, before the first client.
public enum MosquittoLibrary {
    /// `mosquitto_lib_init` is not thread-safe and must run before any client; the agent
    /// has one loop, so the first use on it initialises the library.
    private static let initialised: Bool = {
        mosquitto_lib_init()
        return true
    }()

    /// Initialises the library if it is not yet.
    public static func prepare() {
        _ = initialised
    }

    /// The library's version as "major.minor.revision" (the release links its own static copy).
    public static var version: String {
        var major: Int32 = 0, minor: Int32 = 0, revision: Int32 = 0
        _ = mosquitto_lib_version(&major, &minor, &revision)
        return "\(major).\(minor).\(revision)"
    }
}
