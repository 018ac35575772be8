/// Bounds on the shape of a configuration file, enforced by ``TOMLParser`` as it reads.
///
/// The same parse runs on every SIGHUP, so a crafted file must get a clear error naming
/// its line instead of costing the running agent memory or time; the parser's recursion
/// depth is bounded by these too (docs/configuration.md lists them; so does
/// config/gateway.example.toml). A real configuration is far inside every limit.
public enum TOMLInputLimits {
    /// Bytes in one line (a 2,000-person file's longest line is under 200).
    public static let maximumLineLength = 4_096
    /// Parts of one dotted key or table header: `person.tag` is 2.
    public static let maximumKeyParts = 16
    /// Arrays and inline tables inside each other.
    public static let maximumNesting = 16
    /// Elements of one array written inline (arrays of tables, `[[person]]`, do not count).
    public static let maximumArrayElements = 4_096
}
