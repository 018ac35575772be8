/// Why ``TOMLParser`` refused a text: where, and what to fix.
struct TOMLSyntaxError: Error, Hashable {
    enum Kind: Hashable {
        /// Not TOML 1.0, or TOML that redefines a key or table.
        case syntax
        /// Past one of ``TOMLInputLimits``.
        case inputLimit
    }

    var kind: Kind
    var line: Int
    /// For ``Kind/inputLimit``: the key last written before the place, as written and
    /// shortened; empty for syntax errors (their message names what it needs).
    var key: String
    var message: String
}
