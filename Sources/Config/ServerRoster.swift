import AttendanceEvents

/// A roster served by the site's server (see docs/fleet.md): a revision, the door's mode
/// and persons, validated by the very rules of `[[person]]` tables, alongside the
/// configuration file's persons (an id or identity in both makes the roster invalid).
public struct ServerRoster: Hashable, Sendable {
    public var revision: String
    /// `active` when the roster says nothing.
    public var mode: DoorMode
    public var persons: [Person]

    public init(revision: String, mode: DoorMode = .active, persons: [Person]) {
        self.revision = revision
        self.mode = mode
        self.persons = persons
    }

    /// A larger answer is refused unread: 5,000 persons with a tag each take under 1 MiB.
    public static let maximumSize = 4 << 20

    /// What a roster may hold, checked while it is read (docs/fleet.md, "Limits"): far
    /// above any site (5,000 persons with two identities each are 0.8 MB), and low enough
    /// that no document of ``maximumSize`` builds more than a bounded number of values.
    /// Without them 4 MiB of `{}` made 1.4 million persons to decode.
    public enum Limits {
        public static let persons = 20_000
        public static let tagsPerPerson = 16
        /// Two for each of the most persons: each tag is decoded and checked, so tags
        /// bound the work of a refused roster as much as persons do.
        public static let tags = 40_000
        /// A name is at most 128 characters (512 bytes of UTF-8), a key 64 hex digits.
        public static let stringBytes = 1_024
        /// A tag has seven keys, a person four, the roster three.
        public static let keysPerObject = 16
        /// Any other array (none is valid in a roster).
        public static let elements = 16
        /// Values in the whole document, containers included: 15 for each of the most
        /// persons (a person with a name, `requireProof` and one tag of three identities
        /// and a key takes 11).
        public static let values = 300_000

        static let json = JSONDocument.Limits(
            stringBytes: stringBytes, members: keysPerObject, elements: elements,
            named: [
                .init(path: [.key("persons")], maximum: persons, message: "a roster holds at most 20,000 persons"),
                .init(path: [.key("persons"), .anyElement, .key("tags")], maximum: tagsPerPerson,
                      message: "a person holds at most \(tagsPerPerson) tags",
                      total: (tags, "a roster holds at most 40,000 tags")),
            ],
            values: values, valuesMessage: "a roster holds at most 300,000 JSON values"
        )
    }

    /// Validates a roster document (JSON, camelCase keys) alongside `configuration`: its
    /// persons must be valid `[[person]]`s whose ids and identities the file does not use,
    /// and a `requireProof` person's tag without `key` needs the file's master key. A tag
    /// may not ask for `track = "connection"` (docs/security.md, "What the server may make a
    /// door do").
    public static func validate(
        _ body: [UInt8], alongside configuration: GatewayConfiguration
    ) -> Result<ServerRoster, ServerRosterError> {
        guard body.count <= maximumSize else {
            return .failure(ServerRosterError(message: "the roster is larger than \(maximumSize >> 20) MiB"))
        }
        let document: ConfigValue
        do {
            document = try JSONDocument.parse(body, limits: Limits.json)
        } catch {
            if let path = error.pathText {
                return .failure(ServerRosterError(issues: [ConfigIssue(file: "", line: 0, key: path, message: error.message)]))
            }
            return .failure(ServerRosterError(message: error.description))
        }
        guard case let .table(values) = document else {
            return .failure(ServerRosterError(message: "the roster must be a JSON object, got \(document.typeName == "table" ? "object" : document.typeName)"))
        }
        let diagnostics = Diagnostics(file: "", text: "", dialect: .json)
        var decoder = ConfigurationDecoder(diagnostics: diagnostics, fileSystem: SystemFileSystem(), baseDirectory: "")
        decoder.connectionTracking = .refused(Self.connectionTrackingRefusal)
        var root = TableReader(path: .root, values: values, diagnostics: diagnostics)
        let revision = root.text("revision")
        if !root.contains("revision") { root.reportMissing("revision") }
        let mode = root.choice("mode", of: DoorMode.self) ?? .active
        var persons: [Person]?
        if let tables = root.tables("person") {
            var registry = PersonRegistry(configurationFile: configuration.persons)
            persons = decoder.decodePersons(tables, complete: !root.isInvalid("person"), security: configuration.security,
                                            registry: &registry)
        } else if !root.isInvalid("person") {
            root.reportMissing("person")
        }
        root.reportUnknownKeys()
        guard diagnostics.isEmpty, let revision, let persons else {
            return .failure(ServerRosterError(revision: revision, issues: diagnostics.sortedIssues))
        }
        return .success(ServerRoster(revision: revision, mode: mode, persons: persons))
    }
}

extension ServerRoster {
    /// A kept-open connection is made to whatever device advertises the tag's address, and
    /// held while it does: only the site's own file may ask for one (docs/fleet.md).
    static let connectionTrackingRefusal =
        #"must be "advertising" in a server roster: "connection" keeps a connection open to any device that advertises the tag's address, so only the configuration file may ask for it"#
}

/// Why a server roster was refused: its revision (when it had a valid one) and every
/// problem, each with its JSON path (`persons[3].tags[0].ibeacon`) as the key.
public struct ServerRosterError: Error, Hashable, Sendable, CustomStringConvertible {
    public var revision: String?
    /// In the order found; never empty.
    public var issues: [ConfigIssue]

    public init(revision: String? = nil, issues: [ConfigIssue]) {
        self.revision = revision
        self.issues = issues.isEmpty ? [ConfigIssue(file: "", line: 0, key: "", message: "invalid roster")] : issues
    }

    init(message: String) {
        self.init(issues: [ConfigIssue(file: "", line: 0, key: "", message: message)])
    }

    /// `r-43: persons[3].tags[0].ibeacon: must be …`, and how many more problems there are.
    public var description: String {
        let first = issues[0]
        var text = revision.map { "\($0): " } ?? ""
        text += first.key.isEmpty ? first.message : "\(first.key): \(first.message)"
        if issues.count > 1 { text += " (and \(issues.count - 1) more)" }
        return text
    }
}

extension GatewayConfiguration {
    /// The file's persons and the server roster's side by side (the roster was validated
    /// alongside this configuration's persons).
    public func merging(_ roster: ServerRoster?) -> GatewayConfiguration {
        guard let roster, !roster.persons.isEmpty else { return self }
        var merged = self
        merged.persons += roster.persons
        return merged
    }
}
