import Advertisements
import Config
import DoorAdvertising
import EventLoop
import HCI
import Host
import HostDrivers
import Journal

/// The gateway as the door's own beacon: whenever the host reaches `.scanning` (at
/// bring-up and after every recovery, which resets the controller and so its
/// advertising), submits the advertising commands of the family the host chose, one
/// after the other through the host's command flow, so they coexist with scanning
/// and with the proofs' connection commands.
///
/// A failed step is logged with its HCI status and the sequence stops; the next
/// recovery tries again (retrying at once would most likely fail the same way).
public final class DoorBeaconAdvertiser {
    /// Unowned: the agent holds both, and the link's command completions hold the
    /// advertiser (no cycle).
    public unowned let link: ControllerDriver
    public let beacon: DoorBeacon
    public private(set) var sequence: DoorBeaconSequence
    public var log: LogSink

    public init(link: ControllerDriver, beacon: DoorBeacon, log: LogSink) {
        self.link = link
        self.beacon = beacon
        self.log = log
        sequence = DoorBeaconSequence(beacon: beacon)
    }

    /// Builds the beacon from `[advertise]` for the link; `nil` without `[advertise]`. The
    /// link's state changes reach it through its owner (`hostStateChanged(_:)`).
    public static func make(on link: ControllerDriver, advertise: GatewayConfiguration.Advertise?, log: LogSink) -> DoorBeaconAdvertiser? {
        guard let advertise, let beacon = DoorBeacon(advertise) else { return nil }
        if beacon.intervalWasClamped {
            log.log(.warning, "advertising interval clamped to the limit of the PDU type", [
                "configured_ms": "\(advertise.intervalMilliseconds)", "used_ms": "\(beacon.intervalMilliseconds)",
            ])
        }
        let advertiser = DoorBeaconAdvertiser(link: link, beacon: beacon, log: log)
        // Built on a link that answers already: it starts from the controller's state.
        if let info = link.host.controllerInfo, link.host.isControllerAnswering {
            advertiser.hostStateChanged(.scanning(info))
        }
        return advertiser
    }

    public func hostStateChanged(_ state: HostState) {
        perform(sequence.hostStateChanged(state))
    }

    /// Off for an enrolment window, on again after (see `DoorBeaconSequence.setPaused`).
    public func setPaused(_ paused: Bool) {
        guard paused != sequence.isPaused else { return }
        log.log(.info, paused ? "door beacon paused for the enrolment window" : "door beacon resumed after the enrolment window")
        perform(sequence.setPaused(paused))
    }


    private func perform(_ action: DoorBeaconSequence.Action?) {
        guard let action else { return }
        switch action {
        case .submit(let packet, let opcode, let token):
            // A controller that ignores an advertising command is no reason to reset it
            // and interrupt scanning: the door works without its beacon; it is logged.
            link.submit(packet: packet, opcode: opcode, recoverOnTimeout: false) { [self] outcome, _ in
                self.perform(self.sequence.commandFinished(token: token, outcome: outcome))
            }
        case .advertising(let family):
            log.log(.info, "advertising as the door beacon", [
                "family": "\(family)", "interval_ms": "\(beacon.intervalMilliseconds)",
                "pdu": beacon.pduType == .scannable ? "ADV_SCAN_IND" : "ADV_NONCONN_IND",
            ])
        case .failed(let opcode, let reason):
            log.log(.error, "door beacon not advertising; retried after the next controller recovery", [
                "opcode": "0x" + String(opcode.rawValue, radix: 16), "reason": reason,
            ])
        }
    }
}

extension DoorBeaconAdvertiser: AgentDriver {
    /// Nothing: it advertises whenever the controller scans (`hostStateChanged(_:)`,
    /// through the fan-out), from bring-up on.
    func start(_ configuration: GatewayConfiguration) {}

    /// Nothing: `[advertise]` applies on restart.
    func reload(_ configuration: GatewayConfiguration, previous: GatewayConfiguration) {}

    /// Nothing: the controller, stopped after it, is closed (for `hciN`, reset by the
    /// kernel), and its advertising with it.
    func stop() {}
}

extension DoorBeacon {
    /// From `[advertise]`; `nil` if it names neither an iBeacon nor a service UUID.
    public init?(_ advertise: GatewayConfiguration.Advertise) {
        let power = Int8(clamping: advertise.measuredPower)
        let iBeacon = advertise.iBeacon.flatMap { configured in
            UUID128(bigEndianBytes: configured.uuid).map {
                IBeacon(uuid: $0, major: configured.major, minor: configured.minor, measuredPower: power)
            }
        }
        let serviceUUID = advertise.serviceUUID.flatMap { UUID128(bigEndianBytes: $0) }
        self.init(intervalMilliseconds: advertise.intervalMilliseconds, iBeacon: iBeacon, serviceUUID: serviceUUID)
    }
}
