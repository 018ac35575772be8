import Advertisements
import HCI

/// One event for the server (see docs/event-api.md), complete except for rendering.
///
/// The door core builds it from the presence engine's `checkin` or `checkout` (see
/// `AttendanceEvent+Presence.swift` in GatewayCore); the store assigns `sequence`
/// (monotonic per gateway, persisted) in the transaction that commits the event, then
/// keeps `jsonBody()` for delivery.
public struct AttendanceEvent: Hashable, Sendable {
    /// Local event id: a UUID v4.
    public var id: String
    public var idempotencyKey: String
    public var sequence: Int64
    public var type: AttendanceEventType
    public var userId: String
    public var gateway: GatewayIdentity
    /// Wall-clock milliseconds since the Unix epoch.
    public var timestampMilliseconds: Int64
    public var decidedAtMilliseconds: Int64
    public var visitStartMilliseconds: Int64
    public var beacon: BeaconInfo
    public var rssiSeries: [Int]
    public var txPower: Int?
    /// Rendered as `null` when no proof was involved (a person without `require_proof`,
    /// and every checkout: leaving is not proven), so that the body's keys never vary.
    public var handshake: Handshake?
    public var appVersion: String
    /// Whether the system clock was synchronised when the event was decided; rendered
    /// (`"clockSynced": false`) only when it was not, so other bodies stay as they were.
    public var clockSynced = true
    /// A checkout because a neighbouring door took the person (docs/neighbours.md): that
    /// door's gateway id. Rendered (`"reason": "moved"`, `"movedTo"`) only when set.
    public var movedTo: String?

    public init(id: String, sequence: Int64, type: AttendanceEventType, userId: String, gateway: GatewayIdentity,
                timestampMilliseconds: Int64, decidedAtMilliseconds: Int64, visitStartMilliseconds: Int64,
                beacon: BeaconInfo, rssiSeries: [Int], txPower: Int?, handshake: Handshake?,
                appVersion: String) {
        self.id = id
        self.sequence = sequence
        self.type = type
        self.userId = userId
        self.gateway = gateway
        self.timestampMilliseconds = timestampMilliseconds
        self.decidedAtMilliseconds = decidedAtMilliseconds
        self.visitStartMilliseconds = visitStartMilliseconds
        self.beacon = beacon
        self.rssiSeries = rssiSeries
        self.txPower = txPower
        self.handshake = handshake
        self.appVersion = appVersion
        idempotencyKey = IdempotencyKey.make(personId: userId, gatewayId: gateway.id, type: type,
                                             visitStartMilliseconds: visitStartMilliseconds)
    }

    /// The body's `handshake` block: the proof a checkin relied on, or the last failed
    /// attempt of a lockout.
    public struct Handshake: Hashable, Sendable {
        public var ok: Bool
        public var roundTripMilliseconds: Int

        public init(ok: Bool, roundTripMilliseconds: Int) {
            self.ok = ok
            self.roundTripMilliseconds = roundTripMilliseconds
        }
    }
}

/// Who sends: `[gateway]` id, site and door.
public struct GatewayIdentity: Hashable, Sendable {
    /// `deviceId`, and part of every idempotency key.
    public var id: String
    /// `siteId`, `doorId`: `null` in the body when not configured.
    public var site: String?
    public var door: String?

    public init(id: String, site: String? = nil, door: String? = nil) {
        self.id = id
        self.site = site
        self.door = door
    }
}

/// The body's `beacon` block: the deciding tag, its address and its beacon identity.
public struct BeaconInfo: Hashable, Sendable {
    public var tag: String
    public var address: BluetoothAddress
    public var identity: Identity?

    public enum Identity: Hashable, Sendable {
        /// `uuid` in lowercase 8-4-4-4-12 form.
        case iBeacon(uuid: String, major: Int, minor: Int)
        /// Hex, 20 and 12 digits.
        case eddystoneUID(namespace: String, instance: String)
    }

    public init(tag: String, address: BluetoothAddress, identity: Identity?) {
        self.tag = tag
        self.address = address
        self.identity = identity
    }

    /// The first iBeacon identity of the tag, else its first Eddystone-UID, else none
    /// (address and IRK tags are identified by `address` alone).
    public init(tag: String, address: BluetoothAddress, identities: [TagIdentity]) {
        var identity: Identity?
        for case let .iBeacon(uuid, major, minor) in identities {
            identity = .iBeacon(uuid: TagIdentity.formatUUID(uuid), major: Int(major), minor: Int(minor))
            break
        }
        if identity == nil {
            for case let .eddystoneUID(namespace, instance) in identities {
                identity = .eddystoneUID(namespace: HexText.lowercase(namespace), instance: HexText.lowercase(instance))
                break
            }
        }
        self.init(tag: tag, address: address, identity: identity)
    }
}
