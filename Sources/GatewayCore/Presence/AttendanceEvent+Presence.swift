import Advertisements
import AttendanceEvents

/// The attendance events of the presence engine's decisions: here, not beside
/// `AttendanceEvent`, because the event model knows nothing of the engine (the forwarder
/// and the fleet import it without persons' presence).
extension AttendanceEvent {
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
        if kind == .checkout { movedTo = decision.movedTo }
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
