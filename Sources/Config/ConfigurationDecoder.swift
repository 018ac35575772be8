import Advertisements
import AttendanceEvents
import HCI

/// Turns a parsed document into a ``GatewayConfiguration``, section by section, reporting
/// every problem it meets and carrying on, so one pass finds them all.
struct ConfigurationDecoder {
    let diagnostics: Diagnostics
    let fileSystem: any ConfigurationFileSystem
    /// Relative secret-file paths are relative to the configuration file.
    let baseDirectory: String
    /// The configuration file's mode, when it was read from a file: secrets written inline
    /// are refused when group or others can read them.
    var configurationFilePermissions: UInt32? = nil
    /// Whether a tag may ask for `track = "connection"` (a server roster's may not; the
    /// message says why).
    var connectionTracking = ConnectionTracking.allowed

    enum ConnectionTracking {
        case allowed
        case refused(String)
    }

    /// `nil` only when something was reported.
    func decode(root values: [String: ConfigValue]) -> GatewayConfiguration? {
        var root = TableReader(path: .root, values: values, diagnostics: diagnostics)
        // A missing [gateway] is reported as its missing id; a [gateway] of the wrong type
        // was reported already.
        let gatewayTable = root.table("gateway")
        let hasMQTT = root.contains("mqtt")
        let gateway = gatewayTable.map { decodeGateway($0, hasMQTT: hasMQTT) }
            ?? (root.isInvalid("gateway") ? nil : decodeGateway(emptyTable("gateway", of: root), hasMQTT: hasMQTT))
        let bluetooth = root.table("bluetooth").map(decodeBluetooth) ?? .init()
        let presence = root.table("presence").map(decodePresence) ?? .init()
        let server = root.table("server").map(decodeServer)
        let security = root.table("security").map(decodeSecurity) ?? .init()
        let leds = root.table("leds").map(decodeLEDs)
        let advertise = root.table("advertise").map(decodeAdvertise)
        let metrics = root.table("metrics").map(decodeMetrics)
        let mqtt = root.table("mqtt").map(decodeMQTT)
        let ownId = gateway?.id
        let site = root.table("site").map { decodeSite($0, ownId: ownId) }
        if let site = site ?? nil { checkSiteNeeds(site, security: security, hasMQTT: hasMQTT, path: root.path("site")) }
        let persons = decodePersons(&root, security: security)
        root.reportUnknownKeys()

        // Every section that failed has reported why; only a clean pass builds a value.
        guard diagnostics.isEmpty, let gateway = gateway ?? nil, let persons else { return nil }
        return GatewayConfiguration(
            gateway: gateway, bluetooth: bluetooth, presence: presence, server: server ?? nil,
            security: security, leds: leds ?? nil, advertise: advertise ?? nil, persons: persons, metrics: metrics,
            mqtt: mqtt ?? nil, site: site ?? nil
        )
    }

    /// Only `[leds]`, with its own diagnostics: nil when absent or invalid.
    func decodeLEDsAlone(root values: [String: ConfigValue]) -> GatewayConfiguration.LEDs? {
        var root = TableReader(path: .root, values: values, diagnostics: diagnostics)
        guard let table = root.table("leds"), let leds = decodeLEDs(table), diagnostics.isEmpty else { return nil }
        return leds
    }

    private func emptyTable(_ key: String, of parent: TableReader) -> TableReader {
        TableReader(path: parent.path(key), values: [:], diagnostics: diagnostics)
    }

    // MARK: [gateway]

    private func decodeGateway(_ table: TableReader, hasMQTT: Bool) -> GatewayConfiguration.Gateway? {
        var table = table
        defer { table.reportUnknownKeys() }
        let id = table.identifier("id")
        if !table.contains("id") { table.reportMissing("id") }
        let site = table.text("site")
        if hasMQTT, !table.isInvalid("site") {
            // The bus's topics are PREFIX/SITE/GATEWAY/…: the site is one topic level.
            if let site, site.contains(where: { "/+#".contains($0) }) || site.contains(" ") {
                table.report("site", "is a level of the site bus's topics with [mqtt]: no /, +, # or spaces, got \(quoted(site))")
            } else if site == nil {
                table.reportMissing("site")
            }
        }
        let door = table.text("door")
        let stateDirectory = table.absolutePath("state_dir") ?? GatewayConfiguration.Gateway.defaultStateDirectory
        let logLevel = table.choice("log_level", of: GatewayConfiguration.LogLevel.self) ?? .info
        guard let id else { return nil }
        return .init(id: id, site: site, door: door, stateDirectory: stateDirectory, logLevel: logLevel)
    }

    // MARK: [bluetooth]

    private func decodeBluetooth(_ table: TableReader) -> GatewayConfiguration.Bluetooth {
        typealias Bluetooth = GatewayConfiguration.Bluetooth
        var table = table
        defer { table.reportUnknownKeys() }
        var result = Bluetooth()
        if let text = table.string("transport") {
            // The transport layer's own parser: what validates here is what opens at run.
            let forms = #"must be "hciN", "tcp:HOST:PORT", "serial:/dev/TTY[@BAUD]" or "btsnoop:FILE", got "# + quoted(text)
            do throws(TransportSpecError) {
                let transport = try TransportSpec(parsing: text)
                if case let .serial(path, _) = transport, !path.hasPrefix("/") {
                    // The service runs in /, so a relative device path means nothing there.
                    table.report("transport", forms + " (the serial device needs an absolute path, e.g. serial:/dev/ttyACM0)")
                } else {
                    result.transport = transport
                }
            } catch {
                switch error {
                case let .invalid(_, reason) where reason != TransportSpec.unknownKindReason:
                    table.report("transport", forms + " (\(reason))")
                case .unsupportedBaudRate:
                    table.report("transport", "\(error)")
                default:
                    table.report("transport", forms)
                }
            }
        }
        result.scan = table.choice("scan", of: GatewayConfiguration.ScanMode.self) ?? result.scan
        result.tagIntervalMilliseconds = table.integer("tag_interval_ms", in: Bluetooth.tagIntervalRange, unit: "milliseconds")
            ?? result.tagIntervalMilliseconds
        result.connectMode = table.choice("connect_mode", of: GatewayConfiguration.ConnectMode.self) ?? result.connectMode
        result.maxConnections = table.integer("max_connections", in: Bluetooth.maxConnectionsRange) ?? result.maxConnections
        result.scanDuty = table.number("scan_duty", in: Bluetooth.scanDutyRange)
        return result
    }

    // MARK: [presence]

    private func decodePresence(_ table: TableReader) -> GatewayConfiguration.Presence {
        typealias Presence = GatewayConfiguration.Presence
        var table = table
        defer { table.reportUnknownKeys() }
        var result = Presence()
        let enter = table.integer("enter_rssi", in: Presence.rssiRange, unit: "dBm")
        let exit = table.integer("exit_rssi", in: Presence.rssiRange, unit: "dBm")
        result.enterRSSI = enter ?? result.enterRSSI
        result.exitRSSI = exit ?? result.exitRSSI
        // Hysteresis: without a gap between the thresholds a person at the edge would
        // flap between PRESENT and UNCONFIRMED.
        if !table.isInvalid("enter_rssi"), !table.isInvalid("exit_rssi"), result.exitRSSI >= result.enterRSSI {
            if exit != nil {
                let source = enter == nil ? ", the default" : ""
                table.report("exit_rssi", "must be lower than enter_rssi (\(result.enterRSSI)\(source)), got \(result.exitRSSI)")
            } else {
                table.report("enter_rssi", "must be higher than exit_rssi (\(result.exitRSSI), the default), got \(result.enterRSSI)")
            }
        }
        result.window = table.seconds("window_s") ?? result.window
        result.minSamples = table.integer("min_samples", in: Presence.minSamplesRange) ?? result.minSamples
        result.lostAfter = table.seconds("lost_after_s") ?? result.lostAfter
        result.leaveAfter = table.seconds("leave_after_s") ?? result.leaveAfter
        result.awayAfter = table.seconds("away_after_s") ?? result.awayAfter
        result.proofTTL = table.seconds("proof_ttl_s") ?? result.proofTTL
        if let limit = table.seconds("proof_response_s") {
            // A handshake ends within 10 s whatever the tag does: a longer limit is none.
            if limit <= .seconds(10) {
                result.proofResponseLimit = limit
            } else {
                table.report("proof_response_s", "must be at most 10 (seconds: a proof handshake ends within 10 s), got \(limit.components.seconds)")
            }
        }
        return result
    }

    // MARK: [server]

    private func decodeServer(_ table: TableReader) -> GatewayConfiguration.Server? {
        var table = table
        defer { table.reportUnknownKeys() }
        let url = table.string("url")
        if !table.contains("url") {
            table.reportMissing("url")
        } else if let url {
            checkURL(url, key: "url", in: &table)
            if ServerURL(url)?.hasUserInfo == true { refuseInlineSecret("url", in: &table) }
        }
        let token = readSecret("token_file", in: &table, check: checkToken)
        var caFile: String?
        if let path = table.string("ca_file"), !path.isEmpty {
            caFile = readable(resolve(path), key: "ca_file", in: &table)
        }
        let timeout = table.seconds("timeout_s") ?? .seconds(4)
        let maxBackoff = table.seconds("max_backoff_s") ?? .seconds(300)
        let heartbeat = decodeHeartbeat(&table)
        let roster = table.boolean("roster") ?? false
        let rosterPoll = decodeRosterPoll(&table)
        guard let url, !table.isInvalid("url") else { return nil }
        var server = GatewayConfiguration.Server(url: url, tokenFile: token.path, token: token.bytes, caFile: caFile,
                                                 timeout: timeout, maxBackoff: maxBackoff)
        server.heartbeatInterval = heartbeat
        server.roster = roster
        server.rosterPollInterval = rosterPoll
        return server
    }

    /// The URL is echoed in messages without its user-info: a password must not reach a
    /// terminal or a log even when the URL is wrong.
    private func checkURL(_ url: String, key: String, in table: inout TableReader) {
        guard let parsed = ServerURL(url) else {
            // Not parsed, so its user-info cannot be cut out: not echoed when it may hold one.
            let got = url.contains("@") ? "" : ", got \(quoted(url))"
            table.report(key, "must start with http:// or https://\(got)")
            return
        }
        let shown = quoted(parsed.redacted)
        if parsed.host.isEmpty {
            table.report(key, "has no host name, got \(shown)")
        } else if url.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7F }) {
            table.report(key, "must not contain spaces or control characters, got \(shown)")
        } else if url.contains("?" as Character) || url.contains("#" as Character) {
            table.report(key, "must be a base URL without ?query or #fragment (events go to URL/v1/attendance/events), got \(shown)")
        } else if !parsed.isAllowedTransport {
            table.report(key, "\(ServerURL.plainHTTPRule), got \(shown)")
        }
    }

    /// A bearer token: one line of visible text, as it goes into an HTTP header.
    private func checkToken(_ bytes: [UInt8], path: String) -> Result<[UInt8], SecretContentError> {
        let token = trimmed(bytes)
        guard !token.isEmpty else { return .failure(.init("\(path) is empty; it must hold the server's bearer token")) }
        guard token.allSatisfy({ (0x21 ... 0x7E).contains($0) }) else {
            return .failure(.init("\(path) must hold one token of visible ASCII characters (no spaces, line breaks or control characters)"))
        }
        return .success(token)
    }

    // MARK: [security]

    private func decodeSecurity(_ table: TableReader) -> GatewayConfiguration.Security {
        var table = table
        defer { table.reportUnknownKeys() }
        let secret = readSecret("master_key_file", in: &table) { bytes, path in
            guard let key = parseKey(trimmed(bytes)) else {
                return .failure(.init("\(path) must contain a 256-bit key as 64 hex digits (create one with `beacon-gateway keygen --new-master`)"))
            }
            return .success(key)
        }
        var enrollGroup: String?
        if let group = table.string("enroll_group") {
            if GatewayConfiguration.Security.isGroupName(group) {
                enrollGroup = group
            } else {
                table.report("enroll_group", "must be a group name (1 to 32 of a-z 0-9 _ -, starting with a letter or _), got \(quoted(group))")
            }
        }
        // The path is kept even when the file is bad, so "needs a key" is not reported on
        // top for every require_proof tag.
        return .init(masterKeyFile: secret.path, masterKey: secret.bytes, enrollGroup: enrollGroup)
    }

    // MARK: [leds]

    private func decodeLEDs(_ table: TableReader) -> GatewayConfiguration.LEDs? {
        typealias LEDs = GatewayConfiguration.LEDs
        var table = table
        defer { table.reportUnknownKeys() }
        let chip = table.text("chip", maximumLength: 256) ?? LEDs.defaultChip
        var lines = [String: Int]()
        var seen = [(key: String, line: Int)]()
        for key in ["green", "amber", "red"] {
            if !table.contains(key) {
                table.reportMissing(key)
                _ = table.value(key)
                continue
            }
            guard let line = table.integer(key, in: LEDs.lineRange, unit: "GPIO line offset") else { continue }
            if let other = seen.first(where: { $0.line == line }) {
                table.report(key, "uses the same GPIO line (\(line)) as \(other.key); each LED needs its own line")
            }
            seen.append((key, line))
            lines[key] = line
        }
        let activeLow = table.boolean("active_low") ?? false
        guard let green = lines["green"], let amber = lines["amber"], let red = lines["red"],
              !table.isInvalid("green"), !table.isInvalid("amber"), !table.isInvalid("red")
        else { return nil }
        return .init(chip: chip, green: green, amber: amber, red: red, activeLow: activeLow)
    }

    // MARK: [advertise]

    private func decodeAdvertise(_ table: TableReader) -> GatewayConfiguration.Advertise? {
        typealias Advertise = GatewayConfiguration.Advertise
        var table = table
        defer { table.reportUnknownKeys() }
        var result = Advertise()
        result.intervalMilliseconds = table.integer("interval_ms", in: Advertise.intervalRange, unit: "milliseconds")
            ?? result.intervalMilliseconds
        if let text = table.string("ibeacon") {
            if case let .iBeacon(uuid, major, minor)? = try? TagIdentity.parse(key: "ibeacon", value: text) {
                result.iBeacon = .init(uuid: uuid, major: major, minor: minor)
            } else {
                table.report("ibeacon", #"must be "UUID:MAJOR:MINOR" with MAJOR and MINOR in 0…65535, e.g. "e2c56db5-dffb-48d2-b060-d0f5a71096e0:10:3", got "# + quoted(text))
            }
        }
        if let text = table.string("service_uuid") {
            if let uuid = TagIdentity.parseUUID(Substring(text)) {
                result.serviceUUID = uuid
            } else {
                table.report("service_uuid", #"must be a 128-bit UUID "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", got "# + quoted(text))
            }
        }
        result.measuredPower = table.integer("measured_power", in: Advertise.measuredPowerRange, unit: "dBm at 1 m")
            ?? result.measuredPower
        if !table.contains("ibeacon"), !table.contains("service_uuid") {
            diagnostics.report(table.path, "needs ibeacon or service_uuid (or both): what should phones look for?")
            return nil
        }
        return result
    }

    // MARK: [[person]]

    private func decodePersons(_ root: inout TableReader, security: GatewayConfiguration.Security) -> [Person]? {
        guard let tables = root.tables("person") else {
            return root.isInvalid("person") ? nil : []
        }
        var registry = PersonRegistry()
        return decodePersons(tables, complete: !root.isInvalid("person"), security: security, registry: &registry)
    }

    /// The persons of `tables` (`[[person]]`, or a server roster's `persons`); nil when
    /// any is invalid (reported). Ids and identities must be new to `registry`.
    func decodePersons(
        _ tables: [TableReader], complete: Bool, security: GatewayConfiguration.Security, registry: inout PersonRegistry
    ) -> [Person]? {
        var persons = [Person]()
        persons.reserveCapacity(tables.count)
        registry.reserveCapacity(persons: tables.count)
        var complete = complete
        for var table in tables {
            defer { table.reportUnknownKeys() }
            let id = table.identifier("id")
            // A read id was there: no second lookup for each of thousands of roster tables.
            if id == nil, !table.contains("id") { table.reportMissing("id") }
            if let id {
                if let first = registry.personIDs[id] {
                    table.report("id", "duplicate person id \(quoted(id)), already used by \(describe(first))")
                } else {
                    registry.personIDs[id] = .here(table.path)
                }
            }
            let name = table.text("name")
            let requireProof = table.boolean("require_proof") ?? false

            var tags = [Tag]()
            let tagTables = table.tables("tag") ?? []
            if tagTables.isEmpty, !table.isInvalid("tag") {
                diagnostics.report(table.path, "a person needs at least one tag ([[person.tag]] with an id and an identity)")
            }
            for var tagTable in tagTables {
                defer { tagTable.reportUnknownKeys() }
                let tag = decodeTag(&tagTable, registry: &registry)
                if let tag, requireProof, tag.key == nil, security.masterKeyFile == nil, !tagTable.isInvalid("key") {
                    diagnostics.report(
                        tagTable.path,
                        "person \(quoted(id ?? "?")) requires proof, but this tag has no key = \"…64 hex digits…\" and there is no [security] master_key_file to derive one from"
                    )
                }
                if let tag { tags.append(tag) } else { complete = false }
            }
            if let id, !tags.isEmpty, !table.isInvalid("id"), !table.isInvalid("tag") {
                persons.append(Person(id: id, name: name, requireProof: requireProof, tags: tags))
            } else {
                complete = false
            }
        }
        return complete ? persons : nil
    }

    private func describe(_ owner: PersonRegistry.Owner) -> String {
        switch owner {
        case let .here(path): diagnostics.describe(path)
        case let .configurationFile(person, tag):
            "person[\(person + 1)]\(tag.map { ".tag[\($0 + 1)]" } ?? "") of the configuration file"
        }
    }

    private func decodeTag(_ table: inout TableReader, registry: inout PersonRegistry) -> Tag? {
        let id = table.identifier("id")
        // A read id was there: no second lookup for each of thousands of roster tables.
        if id == nil, !table.contains("id") { table.reportMissing("id") }
        if let id {
            if let first = registry.tagIDs[id] {
                table.report("id", "duplicate tag id \(quoted(id)), already used by \(describe(first))")
            } else {
                registry.tagIDs[id] = .here(table.path)
            }
        }

        var tagIdentities = [TagIdentity]()
        let identityKeys = ["ibeacon", "eddystone_uid", "address", "irk"]
        for key in identityKeys {
            guard let text = table.string(key) else { continue }
            if key == "irk", refuseInlineSecret(key, in: &table) { continue }
            do throws(TagIdentity.ParseError) {
                let identity = try TagIdentity.parse(key: key, value: text)
                if let first = registry.identities[identity] {
                    table.report(key, "the same \(diagnostics.documentKey(key)) is already configured for \(describe(first)); a tag must be recognisable on its own")
                } else {
                    registry.identities[identity] = .here(table.path)
                    tagIdentities.append(identity)
                }
            } catch {
                switch error {
                case let .invalid(_, expected):
                    // An IRK is a secret: never echo it, even when malformed.
                    let got = key == "irk" ? "" : ", got \(quoted(text))"
                    table.report(key, "must be \(expected)\(got)")
                case .unknownKey:
                    table.report(key, "\(error)")
                }
            }
        }
        if tagIdentities.isEmpty, !identityKeys.contains(where: { table.contains($0) }) {
            diagnostics.report(table.path, "a tag needs at least one identity: ibeacon, \(diagnostics.documentKey("eddystone_uid")), address or irk")
        }

        var key: [UInt8]?
        if let text = table.string("key"), !refuseInlineSecret("key", in: &table) {
            key = parseKey(Array(text.utf8))
            if key == nil {
                table.report("key", "must be 64 hex digits (the tag's 256-bit proof key)")
            }
        }
        let track = table.choice("track", of: Tag.Track.self) ?? .advertising
        if track == .connection, case let .refused(message) = connectionTracking {
            table.report("track", message)
        }

        guard let id, !table.isInvalid("id"), !tagIdentities.isEmpty,
              !identityKeys.contains(where: { table.isInvalid($0) }), !table.isInvalid("key"), !table.isInvalid("track")
        else { return nil }
        return Tag(id: id, identities: tagIdentities, key: key, track: track)
    }
}

/// Person ids, tag ids and tag identities already taken, and by whom: each must be
/// unique across every person in force, the file's and the server's alike.
struct PersonRegistry {
    enum Owner {
        /// In the document being decoded.
        case here(ConfigPath)
        /// A person (and tag) of the configuration file, counted from 0.
        case configurationFile(person: Int, tag: Int?)
    }

    var personIDs: [String: Owner] = [:]
    var tagIDs: [String: Owner] = [:]
    var identities: [TagIdentity: Owner] = [:]

    init() {}

    /// Room for `count` more persons of a tag each with two identities (an iBeacon and
    /// an address, say): a roster's thousands of persons otherwise rehash each table a
    /// dozen times as it grows.
    mutating func reserveCapacity(persons count: Int) {
        personIDs.reserveCapacity(personIDs.count + count)
        tagIDs.reserveCapacity(tagIDs.count + count)
        identities.reserveCapacity(identities.count + 2 * count)
    }

    /// Every id and identity of the configuration file's persons.
    init(configurationFile persons: [Person]) {
        for (personIndex, person) in persons.enumerated() {
            personIDs[person.id] = .configurationFile(person: personIndex, tag: nil)
            for (tagIndex, tag) in person.tags.enumerated() {
                tagIDs[tag.id] = .configurationFile(person: personIndex, tag: tagIndex)
                for identity in tag.identities {
                    identities[identity] = .configurationFile(person: personIndex, tag: tagIndex)
                }
            }
        }
    }
}

/// 64 hex digits → 32 bytes.
func parseKey(_ utf8: [UInt8]) -> [UInt8]? {
    utf8.withUnsafeBufferPointer { HexText.bytes($0, byteCount: 32) }
}

/// Without leading and trailing ASCII whitespace (files usually end with a newline).
func trimmed(_ bytes: [UInt8]) -> [UInt8] {
    let isSpace = { (byte: UInt8) in byte == 0x20 || (0x09 ... 0x0D).contains(byte) }
    guard let first = bytes.firstIndex(where: { !isSpace($0) }),
          let last = bytes.lastIndex(where: { !isSpace($0) }) else { return [] }
    return Array(bytes[first ... last])
}
