import GatewayCore

extension GatewayConfiguration {
    /// `[site]` (docs/neighbours.md, docs/configuration.md): the neighbouring doors that can
    /// hear this door's people, and the two numbers of the rule that checks a person in at
    /// the one door that hears them best.
    public struct Site: Hashable, Sendable {
        /// Gateway ids, or `"*"`: every door of the site seen on the bus. Empty: this door
        /// decides alone, as without `[site]`.
        public var neighbours: NeighbourList
        /// `margin_db`: how much stronger this door must hear a person than every neighbour
        /// to take them.
        public var marginDB: Double
        /// `handover_s`: how long a neighbour must lead by `margin_db` before a present
        /// person has moved there.
        public var handover: Duration

        public init(neighbours: NeighbourList = .doors([]), marginDB: Double = Site.defaultMarginDB,
                    handover: Duration = Site.defaultHandover) {
            self.neighbours = neighbours
            self.marginDB = marginDB
            self.handover = handover
        }

        /// Whether any neighbour is listed (`"*"` counts).
        public var hasNeighbours: Bool {
            if case let .doors(ids) = neighbours { return !ids.isEmpty }
            return true
        }

        public static let defaultMarginDB = 6.0
        public static let defaultHandover: Duration = .seconds(5)
        /// Below 1 dB fading alone flips a person between doors; above 30 dB nobody by a
        /// wall is ever taken.
        public static let marginRange: ClosedRange<Double> = 1 ... 30
        /// At least a second (a sighting period); at most a minute (longer than a door holds
        /// a person it no longer hears).
        public static let handoverRange: ClosedRange<Duration> = .seconds(1) ... .seconds(60)
        /// Written for "every door of the site".
        public static let anyDoor = "*"
    }
}

extension ConfigurationDecoder {
    /// `[site]`; nil when invalid (reported). `ownId`: this gateway's id, which no
    /// neighbour may be.
    func decodeSite(_ table: TableReader, ownId: String?) -> GatewayConfiguration.Site? {
        typealias Site = GatewayConfiguration.Site
        var table = table
        defer { table.reportUnknownKeys() }
        var result = Site()
        if !table.contains("neighbours") {
            table.reportMissing("neighbours")
        } else if let list = neighbourList(in: &table, ownId: ownId) {
            result.neighbours = list
        }
        result.marginDB = table.number("margin_db", in: Site.marginRange) ?? result.marginDB
        if let handover = table.seconds("handover_s") {
            if Site.handoverRange.contains(handover) {
                result.handover = handover
            } else {
                table.report("handover_s", "must be between 1 and 60 (seconds), got \(formatNumber(handover.secondsValue))")
            }
        }
        guard !table.isInvalid("neighbours"), !table.isInvalid("margin_db"), !table.isInvalid("handover_s") else { return nil }
        return result
    }

    /// `neighbours`: an array of gateway ids, none twice and none this door's own, or
    /// `["*"]` alone.
    private func neighbourList(in table: inout TableReader, ownId: String?) -> NeighbourList? {
        guard let value = table.value("neighbours") else { return nil }
        guard case let .array(elements) = value else {
            table.report("neighbours", #"must be an array of gateway ids, e.g. ["door-lab-302"], or ["*"] for every door of the site, got \#(value.typeName)"#)
            return nil
        }
        let path = table.path("neighbours")
        var ids: [String] = []
        var bad = false
        for (offset, element) in elements.enumerated() {
            let elementPath = path.appending(element: offset + 1)
            guard case let .string(id) = element else {
                diagnostics.report(elementPath, "must be a gateway id (a string), got \(element.typeName)")
                bad = true
                continue
            }
            if id == GatewayConfiguration.Site.anyDoor {
                if elements.count > 1 {
                    diagnostics.report(elementPath, #""*" (every door of the site) must be the only neighbour: write neighbours = ["*"]"#)
                    bad = true
                }
            } else if !Identifier.isValid(id) {
                diagnostics.report(elementPath, "must be a gateway id: 1 to 64 letters, digits or . _ - : @, got \(quoted(id))")
                bad = true
            } else if id == ownId {
                diagnostics.report(elementPath, "is this gateway's own id ([gateway] id); list the other doors that can hear its people")
                bad = true
            } else if ids.contains(id) {
                diagnostics.report(elementPath, "lists \(quoted(id)) a second time")
                bad = true
            }
            ids.append(id)
        }
        if bad {
            table.markInvalid("neighbours")
            return nil
        }
        return ids == [GatewayConfiguration.Site.anyDoor] ? .anyDoorOfSite : .doors(ids)
    }

    /// Neighbours need the site master key (the sightings' keys derive from it) and the
    /// site bus (the sightings travel on it): which is missing is said on `neighbours`.
    func checkSiteNeeds(_ site: GatewayConfiguration.Site, security: GatewayConfiguration.Security, hasMQTT: Bool,
                        path: ConfigPath) {
        guard site.hasNeighbours else { return }
        var missing: [String] = []
        if security.masterKeyFile == nil { missing.append("[security] master_key_file (sightings are signed and name persons with keys derived from it)") }
        if !hasMQTT { missing.append("[mqtt] (sightings travel on the site bus)") }
        guard !missing.isEmpty else { return }
        diagnostics.report(path.appending("neighbours"), "needs " + missing.joined(separator: " and "))
    }
}

extension Duration {
    /// In seconds, as a number (for messages).
    var secondsValue: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
