import JSONText

extension AttendanceEvent {
    /// The request body of docs/event-api.md, keys in the documented order, on one line.
    public func jsonBody() -> String {
        var json = JSONWriter()
        json.beginObject()
        json.key("id"); json.string(id)
        json.key("idempotencyKey"); json.string(idempotencyKey)
        json.key("sequence"); json.number(Int(clamping: sequence))
        json.key("type"); json.string(type.rawValue)
        json.key("userId"); json.string(userId)
        json.key("deviceId"); json.string(gateway.id)
        json.key("siteId"); json.string(gateway.site)
        json.key("doorId"); json.string(gateway.door)
        json.key("timestamp"); json.string(ISO8601Timestamp.format(millisecondsSinceEpoch: timestampMilliseconds))
        json.key("decidedAt"); json.string(ISO8601Timestamp.format(millisecondsSinceEpoch: decidedAtMilliseconds))
        json.key("visitStart"); json.string(ISO8601Timestamp.format(millisecondsSinceEpoch: visitStartMilliseconds))
        json.key("beacon")
        json.beginObject()
        json.key("tag"); json.string(beacon.tag)
        json.key("address"); json.string(beacon.address.description)
        switch beacon.identity {
        case let .iBeacon(uuid, major, minor):
            json.key("uuid"); json.string(uuid)
            json.key("major"); json.number(major)
            json.key("minor"); json.number(minor)
        case let .eddystoneUID(namespace, instance):
            json.key("namespace"); json.string(namespace)
            json.key("instance"); json.string(instance)
        case nil:
            break
        }
        json.endObject()
        json.key("rssiSeries")
        json.beginArray()
        for rssi in rssiSeries { json.number(rssi) }
        json.endArray()
        json.key("txPower"); json.number(txPower)
        json.key("handshake")
        if let handshake {
            json.beginObject()
            json.key("ok"); json.bool(handshake.ok)
            json.key("rt"); json.number(handshake.roundTripMilliseconds)
            json.endObject()
        } else {
            json.null()
        }
        json.key("app")
        json.beginObject()
        json.key("version"); json.string(appVersion)
        json.endObject()
        if let movedTo {
            json.key("reason"); json.string("moved")
            json.key("movedTo"); json.string(movedTo)
        }
        if !clockSynced {
            json.key("clockSynced"); json.bool(false)
        }
        json.endObject()
        return json.text
    }
}
