/// One problem found in a configuration file, located well enough to fix it.
public struct ConfigIssue: Hashable, Sendable, CustomStringConvertible {
    /// The file as it was named to the loader.
    public var file: String
    /// 1-based; 0 when the problem concerns the whole file (e.g. a missing table).
    public var line: Int
    /// The dotted path of the key, e.g. `presence.exit_rssi` or `person[2].tag[1].ibeacon`
    /// (array elements counted from 1 in file order); empty for syntax errors.
    public var key: String
    /// What is wrong and what would be valid. Never contains a secret.
    public var message: String

    public init(file: String, line: Int, key: String, message: String) {
        self.file = file
        self.line = line
        self.key = key
        self.message = message
    }

    /// `gateway.toml:14: presence.exit_rssi: must be lower than enter_rssi (-70), got -65`
    public var description: String {
        let location = line > 0 ? "\(file):\(line)" : file
        return key.isEmpty ? "\(location): \(message)" : "\(location): \(key): \(message)"
    }
}

/// Every problem of a configuration file at once, sorted by line, so one run of
/// `check-config` shows the installer all there is to fix.
public struct ConfigurationError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Never empty; sorted by line, then in the order they were found.
    public var issues: [ConfigIssue]
    /// The `[leds]` table when it was valid although the rest was not: the agent lights
    /// red steady on these lines before it exits (fatal configuration error, see docs/leds.md).
    public var salvagedLEDs: GatewayConfiguration.LEDs?

    public init(issues: [ConfigIssue], salvagedLEDs: GatewayConfiguration.LEDs? = nil) {
        self.issues = issues
        self.salvagedLEDs = salvagedLEDs
    }

    /// One issue per line.
    public var description: String {
        issues.map(\.description).joined(separator: "\n")
    }
}
