import Advertisements

extension GatewayConfiguration {
    /// What `check-config` prints: the effective configuration as TOML, defaults filled in.
    ///
    /// Tag keys and IRKs are shown as `"********"`; the token and master key appear only as
    /// the paths of their files. Everything else parses back to the same configuration.
    public func renderEffective() -> String {
        var out = TOMLWriter()
        out.comment("Effective configuration: defaults filled in, secrets masked.")

        out.table("gateway")
        out.string("id", gateway.id)
        out.optionalString("site", gateway.site)
        out.optionalString("door", gateway.door)
        out.string("state_dir", gateway.stateDirectory)
        out.string("log_level", gateway.logLevel.rawValue)

        out.table("bluetooth")
        out.string("transport", bluetooth.transport.description)
        out.string("scan", bluetooth.scan.rawValue)
        out.integer("tag_interval_ms", bluetooth.tagIntervalMilliseconds)
        out.string("connect_mode", bluetooth.connectMode.rawValue)
        out.integer("max_connections", bluetooth.maxConnections)
        if let scanDuty = bluetooth.scanDuty {
            out.raw("scan_duty", "\(scanDuty)")
        } else {
            out.comment("scan_duty is not set: the scan window follows tag_interval_ms")
        }

        out.table("presence")
        out.integer("enter_rssi", presence.enterRSSI)
        out.integer("exit_rssi", presence.exitRSSI)
        out.seconds("window_s", presence.window)
        out.integer("min_samples", presence.minSamples)
        out.seconds("lost_after_s", presence.lostAfter)
        out.seconds("leave_after_s", presence.leaveAfter)
        out.seconds("away_after_s", presence.awayAfter)
        out.seconds("proof_ttl_s", presence.proofTTL)
        out.seconds("proof_response_s", presence.proofResponseLimit)

        if let server {
            out.table("server")
            out.string("url", server.displayURL)
            if server.displayURL != server.url { out.comment("url: its user-info (user:password@) is not shown") }
            out.optionalString("token_file", server.tokenFile)
            out.string("ca_file", server.caFile ?? "")
            out.seconds("timeout_s", server.timeout)
            out.seconds("max_backoff_s", server.maxBackoff)
            if let heartbeat = server.heartbeatInterval { out.seconds("heartbeat_s", heartbeat) } else { out.integer("heartbeat_s", 0) }
            out.raw("roster", "\(server.roster)")
            out.seconds("roster_poll_s", server.rosterPollInterval)
        } else {
            out.comment("no [server]: events are stored and logged only")
        }

        if let mqtt {
            out.table("mqtt")
            out.string("url", mqtt.url.description)
            out.optionalString("username", mqtt.username)
            out.optionalString("password_file", mqtt.passwordFile)
            out.string("ca_file", mqtt.caFile ?? "")
            out.string("topic_prefix", mqtt.topicPrefix)
            out.raw("events", "\(mqtt.events)")
            out.raw("presence", "\(mqtt.presence)")
            out.raw("homeassistant", "\(mqtt.homeAssistant)")
            out.string("discovery_prefix", mqtt.discoveryPrefix)
        }

        if let site {
            out.table("site")
            switch site.neighbours {
            case let .doors(ids): out.raw("neighbours", "[" + ids.map(tomlString).joined(separator: ", ") + "]")
            case .anyDoorOfSite: out.raw("neighbours", "[\(tomlString(Site.anyDoor))]")
            }
            out.raw("margin_db", formatNumber(site.marginDB))
            out.seconds("handover_s", site.handover)
        }

        if let metrics {
            out.table("metrics")
            out.string("listen", metrics.listen?.description ?? "")
            out.string("textfile", metrics.textfile ?? "")
        }

        if security.masterKeyFile != nil || security.enrollGroup != nil {
            out.table("security")
            if let masterKeyFile = security.masterKeyFile { out.string("master_key_file", masterKeyFile) }
            if let enrollGroup = security.enrollGroup { out.string("enroll_group", enrollGroup) }
        }

        if let leds {
            out.table("leds")
            out.string("chip", leds.chip)
            out.integer("green", leds.green)
            out.integer("amber", leds.amber)
            out.integer("red", leds.red)
            out.raw("active_low", "\(leds.activeLow)")
        } else {
            out.comment("no [leds]: no GPIO is touched")
        }

        if let advertise {
            out.table("advertise")
            out.integer("interval_ms", advertise.intervalMilliseconds)
            if let beacon = advertise.iBeacon {
                out.string("ibeacon", "\(TagIdentity.formatUUID(beacon.uuid)):\(beacon.major):\(beacon.minor)")
            }
            if let uuid = advertise.serviceUUID {
                out.string("service_uuid", TagIdentity.formatUUID(uuid))
            }
            out.integer("measured_power", advertise.measuredPower)
        }

        for person in persons {
            out.arrayTable("person")
            out.string("id", person.id)
            out.optionalString("name", person.name)
            out.raw("require_proof", "\(person.requireProof)")
            for tag in person.tags {
                out.arrayTable("person.tag", indent: "  ")
                out.string("id", tag.id)
                for identity in tag.identities {
                    switch identity {
                    case .irk: out.string("irk", Self.mask)
                    default: out.string(identity.configurationKey, identity.description)
                    }
                }
                if tag.key != nil {
                    out.string("key", Self.mask)
                } else if person.requireProof {
                    out.comment("key derived from the master key")
                }
                out.string("track", tag.track.rawValue)
            }
        }
        return out.text
    }

    /// What a secret looks like in anything printed.
    static let mask = "********"
}

/// Just enough TOML output for ``GatewayConfiguration/renderEffective()``.
private struct TOMLWriter {
    private(set) var text = ""
    private var indent = ""

    mutating func comment(_ comment: String) {
        text += "\(indent)# \(comment)\n"
    }

    mutating func table(_ name: String) {
        indent = ""
        text += "\n[\(name)]\n"
    }

    mutating func arrayTable(_ name: String, indent: String = "") {
        self.indent = indent
        text += "\n\(indent)[[\(name)]]\n"
    }

    mutating func raw(_ key: String, _ value: String) {
        text += "\(indent)\(key) = \(value)\n"
    }

    mutating func string(_ key: String, _ value: String) {
        raw(key, tomlString(value))
    }

    mutating func optionalString(_ key: String, _ value: String?) {
        if let value { string(key, value) } else { comment("\(key) is not set") }
    }

    mutating func integer(_ key: String, _ value: Int) {
        raw(key, "\(value)")
    }

    mutating func seconds(_ key: String, _ value: Duration) {
        let (seconds, attoseconds) = value.components
        let number = Double(seconds) + Double(attoseconds) / 1e18
        raw(key, formatNumber(number))
    }
}

/// A TOML basic string: quotes, backslashes and control characters escaped.
func tomlString(_ value: String) -> String {
    var result = "\""
    for scalar in value.unicodeScalars {
        switch scalar {
        case "\"": result += "\\\""
        case "\\": result += "\\\\"
        case "\n": result += "\\n"
        case "\t": result += "\\t"
        case "\r": result += "\\r"
        case _ where scalar.value < 0x20 || scalar.value == 0x7F:
            let digits = String(scalar.value, radix: 16)
            result += "\\u" + String(repeating: "0", count: 4 - digits.count) + digits
        default:
            result.unicodeScalars.append(scalar)
        }
    }
    return result + "\""
}
