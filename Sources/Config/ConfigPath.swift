/// Where a value sits in the document: `person[2].tag[1].ibeacon`.
struct ConfigPath: Hashable, Sendable, CustomStringConvertible {
    enum Component: Hashable, Sendable {
        case key(String)
        /// A key exactly as a document wrote it, never renamed (an unknown key of a JSON
        /// document, see ``DocumentDialect``).
        case literal(String)
        /// An element of an array (of tables), counted from 1 in file order, as people count.
        case element(Int)
    }

    var components: [Component]

    static let root = ConfigPath(components: [])

    func appending(_ key: String) -> ConfigPath {
        appending(component: .key(key))
    }

    func appending(element ordinal: Int) -> ConfigPath {
        appending(component: .element(ordinal))
    }

    /// One allocation, not the two of `components + [component]`: every table of a
    /// 5,000-person roster gets a path.
    private func appending(component: Component) -> ConfigPath {
        var extended = [Component]()
        extended.reserveCapacity(components.count + 1)
        extended.append(contentsOf: components)
        extended.append(component)
        return ConfigPath(components: extended)
    }

    var parent: ConfigPath? {
        components.isEmpty ? nil : ConfigPath(components: components.dropLast())
    }

    var description: String {
        var text = ""
        for component in components {
            switch component {
            case let .key(key), let .literal(key):
                if !text.isEmpty { text += "." }
                // Keys come from the file: quoted (escaped, bounded) unless plainly bare.
                text += ConfigPath.isBare(key) && key.utf8.count <= 64 ? key : quoted(key)
            case let .element(ordinal):
                text += "[\(ordinal)]"
            }
        }
        return text
    }

    /// Keys TOML allows without quotes.
    static func isBare(_ key: String) -> Bool {
        !key.isEmpty && key.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "A") ... UInt8(ascii: "Z"), UInt8(ascii: "a") ... UInt8(ascii: "z"),
                 UInt8(ascii: "0") ... UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "-"): true
            default: false
            }
        }
    }
}
