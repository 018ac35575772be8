extension Severity {
    /// `debug`, `info`, `notice`, `warning`, `error` (the `log_level` of `[gateway]`);
    /// `warn` and `err` too, as people type them.
    public init?(name: String) {
        switch name.lowercased() {
        case "debug": self = .debug
        case "info": self = .info
        case "notice": self = .notice
        case "warning", "warn": self = .warning
        case "error", "err": self = .error
        default: return nil
        }
    }
}
