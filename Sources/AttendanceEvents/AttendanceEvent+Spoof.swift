import Advertisements
import HCI

extension AttendanceEvent {
    /// The `spoof_suspected` event of a lockout (see docs/proof-protocol.md): one per lockout. Its
    /// idempotency key uses the lockout's start in place of a visit start, so a restart
    /// re-creating it yields the same key. `timestamp` and `visitStart` are that start;
    /// `handshake` reports the last failed attempt (`ok: false`).
    public static func spoofSuspected(
        personId: String, tagId: String, address: BluetoothAddress, identities: [TagIdentity],
        lockoutStartMilliseconds: Int64, decidedAtMilliseconds: Int64, lastRoundTripMilliseconds: Int,
        rssiSeries: [Int] = [], txPower: Int? = nil,
        gateway: GatewayIdentity, sequence: Int64, appVersion: String, id: String = EventIdentifier.uuidV4()
    ) -> AttendanceEvent {
        AttendanceEvent(id: id, sequence: sequence, type: .spoofSuspected, userId: personId, gateway: gateway,
                        timestampMilliseconds: lockoutStartMilliseconds, decidedAtMilliseconds: decidedAtMilliseconds,
                        visitStartMilliseconds: lockoutStartMilliseconds,
                        beacon: BeaconInfo(tag: tagId, address: address, identities: identities),
                        rssiSeries: rssiSeries, txPower: txPower,
                        handshake: .init(ok: false, roundTripMilliseconds: lastRoundTripMilliseconds), appVersion: appVersion)
    }
}
