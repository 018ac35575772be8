import HCI

/// One event for the server (see docs/event-api.md), complete except for rendering.
///
/// The agent builds it from a `PresenceDecision` when the engine emits `checkin` or
/// `checkout`; the store assigns `sequence` (monotonic per gateway, persisted) in the
/// transaction that commits the event, then keeps `jsonBody()` for delivery.
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
    public var handshake: PresenceDecision.Handshake?
    public var appVersion: String
    /// Whether the system clock was synchronised when the event was decided; rendered
    /// (`"clockSynced": false`) only when it was not, so other bodies stay as they were.
    public var clockSynced = true

    public init(id: String, sequence: Int64, type: AttendanceEventType, userId: String, gateway: GatewayIdentity,
                timestampMilliseconds: Int64, decidedAtMilliseconds: Int64, visitStartMilliseconds: Int64,
                beacon: BeaconInfo, rssiSeries: [Int], txPower: Int?, handshake: PresenceDecision.Handshake?,
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

    /// The event for a presence decision. `identities` are the deciding tag's configured
    /// identities (for the beacon block); `id` defaults to a fresh UUID v4.
    public init(_ kind: AttendanceEventType, decision: PresenceDecision, gateway: GatewayIdentity, sequence: Int64,
                identities: [TagIdentity], appVersion: String, id: String = EventIdentifier.uuidV4()) {
        self.init(id: id, sequence: sequence, type: kind, userId: decision.personId, gateway: gateway,
                  timestampMilliseconds: decision.timestampWallMilliseconds,
                  decidedAtMilliseconds: decision.decidedAtWallMilliseconds,
                  visitStartMilliseconds: decision.visitStartWallMilliseconds,
                  beacon: BeaconInfo(tag: decision.tagId, address: decision.address, identities: identities),
                  rssiSeries: decision.rssiSeries, txPower: decision.txPower,
                  handshake: kind == .checkin ? decision.handshake : nil, appVersion: appVersion)
    }

    /// The event for a `PresenceEvent`, or nil for the ones that are only logged.
    public init?(_ event: PresenceEvent, gateway: GatewayIdentity, sequence: Int64, identities: [TagIdentity],
                 appVersion: String, id: String = EventIdentifier.uuidV4()) {
        switch event {
        case let .checkin(decision):
            self.init(.checkin, decision: decision, gateway: gateway, sequence: sequence, identities: identities,
                      appVersion: appVersion, id: id)
        case let .checkout(decision):
            self.init(.checkout, decision: decision, gateway: gateway, sequence: sequence, identities: identities,
                      appVersion: appVersion, id: id)
        case .stateChanged, .waitingForProof:
            return nil
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
                identity = .eddystoneUID(namespace: hex(namespace), instance: hex(instance))
                break
            }
        }
        self.init(tag: tag, address: address, identity: identity)
    }
}
