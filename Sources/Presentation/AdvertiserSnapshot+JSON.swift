import Advertisements
import HCI
import JSONText

extension AdvertiserSnapshot {
    /// The `scan --json` line for this advertiser (see docs/cli.md), without the newline: keys
    /// in the documented order, `person`/`tag` null without a match, `final` true on the
    /// closing lines.
    /// `neighbours`: with the site bus read (docs/cli.md), what each neighbouring door
    /// hears of this advertiser's person (a key `neighbours` before `final`); nil: no key.
    public func jsonLine(final: Bool, neighbours: [NeighbourReading]? = nil) -> String {
        var json = JSONWriter()
        json.beginObject()
        json.key("address")
        json.string(address.description)
        json.key("addressType")
        json.string(addressType.jsonName)
        json.key("reports")
        json.number(reports)
        json.key("reportsPerSecond")
        json.number(reportsPerSecond, fractionDigits: 1)
        json.key("rssi")
        if let rssi {
            json.beginObject()
            json.key("last")
            json.number(rssi.last)
            json.key("median")
            json.number(rssi.median)
            json.key("min")
            json.number(rssi.min)
            json.key("max")
            json.number(rssi.max)
            json.endObject()
        } else {
            json.null()
        }
        json.key("identity")
        identity.writeJSON(to: &json)
        json.key("txPower")
        json.number(txPower)
        json.key("connectable")
        json.bool(connectable)
        json.key("person")
        json.string(personId)
        json.key("tag")
        json.string(tagId)
        if let neighbours {
            json.key("neighbours")
            json.beginArray()
            for reading in neighbours {
                json.beginObject()
                json.key("gateway"); json.string(reading.neighbour)
                json.key("rssi"); json.number(reading.rssi)
                json.key("holds"); json.bool(reading.holds)
                json.key("ageMs"); json.number(Int(reading.ageMilliseconds))
                json.endObject()
            }
            json.endArray()
        }
        json.key("final")
        json.bool(final)
        json.endObject()
        return json.text
    }
}

extension AdvertisementIdentity {
    /// `identity`: whichever of `ibeacon`, `eddystone_uid`, `name`, `serviceUuids`,
    /// `manufacturer` were decoded, in that order; `manufacturer` is the company id as a
    /// number (0x004C → 76).
    public func writeJSON(to json: inout JSONWriter) {
        json.beginObject()
        if let iBeacon {
            json.key("ibeacon")
            json.string(iBeacon.description)
        }
        if let eddystoneUID {
            json.key("eddystone_uid")
            json.string(eddystoneUID.description)
        }
        if let name {
            json.key("name")
            json.string(name)
        }
        if !serviceUUIDs.isEmpty {
            json.key("serviceUuids")
            json.beginArray()
            for uuid in serviceUUIDs { json.string(uuid.description) }
            json.endArray()
        }
        if let manufacturer {
            json.key("manufacturer")
            json.number(Int(manufacturer.rawValue))
        }
        json.endObject()
    }
}

extension AddressType {
    /// `addressType` in docs/cli.md has two kinds: identity addresses the controller resolved count as the
    /// kind of their identity.
    var jsonName: String {
        switch self {
        case .publicDevice, .publicIdentity: "public"
        case .randomDevice, .randomIdentity: "random"
        default: description
        }
    }
}
