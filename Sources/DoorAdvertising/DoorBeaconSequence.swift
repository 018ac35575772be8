import HCI
import Host

/// Sans-IO: the advertising commands for one bring-up of the controller, one at a time.
///
/// Each `.scanning` state starts a fresh run (a recovery has reset the controller, and
/// with it the advertising); answers to an older run's tokens are ignored.
public struct DoorBeaconSequence: Sendable {
    public enum Action: Sendable {
        /// Submit the command; hand its outcome back with `token`, the sequence's own
        /// number for this step (a counter: every step of every run has its own).
        case submit(HCIPacket, Opcode, token: UInt64)
        /// The last command succeeded: the beacon is on air.
        case advertising(CommandFamily)
        /// A step failed; nothing more until the next `.scanning`.
        case failed(Opcode, reason: String)
    }

    private enum State: Sendable {
        case idle
        case running(family: CommandFamily, steps: [(HCIPacket, Opcode)], next: Int, token: UInt64)
        case advertising(CommandFamily)
        case failed
    }

    public let beacon: DoorBeacon
    private var state: State = .idle
    private var lastToken: UInt64 = 0
    /// Set while an enrolment window holds the advertising (`setPaused`).
    public private(set) var isPaused = false
    /// The controller as it last reached `.scanning`; nil while it is being reset.
    private var scanningInfo: ControllerInfo?

    public init(beacon: DoorBeacon) {
        self.beacon = beacon
    }

    public var isAdvertising: Bool {
        if case .advertising = state { return true }
        return false
    }

    public mutating func hostStateChanged(_ state: HostState) -> Action? {
        guard case .scanning(let info) = state else {
            // Not scanning: the controller is being reset; whatever ran is gone.
            self.state = .idle
            scanningInfo = nil
            return nil
        }
        scanningInfo = info
        guard !isPaused else {
            self.state = .idle
            return nil
        }
        let steps = Self.commands(for: beacon, family: info.commandFamily)
        return submit(family: info.commandFamily, steps: steps, index: 0)
    }

    public mutating func commandFinished(token: UInt64, outcome: HostCommandResult.Outcome) -> Action? {
        guard case .running(let family, let steps, let index, let expected) = state, token == expected,
              steps.indices.contains(index) else { return nil }
        let opcode = steps[index].1
        switch outcome {
        case .completed(let status, _) where status == .success:
            if index + 1 == steps.count {
                state = .advertising(family)
                return .advertising(family)
            }
            return submit(family: family, steps: steps, index: index + 1)
        case .completed(let status, _), .status(let status):
            state = .failed
            return .failed(opcode, reason: "status \(status)")
        case .timedOut:
            state = .failed
            return .failed(opcode, reason: "timed out")
        case .flushed:
            // A recovery is under way; the next `.scanning` starts again.
            state = .idle
            return nil
        case .notSent(let why):
            state = .failed
            return .failed(opcode, reason: "not sent: \(why)")
        }
    }

    /// Off while an enrolment window advertises from the same advertising set (SPEC §15:
    /// the door beacon may pause for the window), on again after: a fresh run when the
    /// controller is scanning. Pausing a beacon on air (or on its way) turns advertising
    /// off; what the older run's commands answer is ignored from then on.
    public mutating func setPaused(_ paused: Bool) -> Action? {
        guard paused != isPaused else { return nil }
        isPaused = paused
        if paused {
            let family: CommandFamily
            switch state {
            case .running(let running, _, _, _): family = running
            case .advertising(let advertising): family = advertising
            case .idle, .failed: return nil
            }
            state = .idle
            lastToken &+= 1
            let stop = ConnectableAdvertising.stopCommand(family: family)
            return .submit(stop.0, stop.1, token: lastToken)
        }
        guard let info = scanningInfo else { return nil }
        return hostStateChanged(.scanning(info))
    }

    private mutating func submit(family: CommandFamily, steps: [(HCIPacket, Opcode)], index: Int) -> Action? {
        guard steps.indices.contains(index) else { return nil }
        lastToken &+= 1
        state = .running(family: family, steps: steps, next: index, token: lastToken)
        return .submit(steps[index].0, steps[index].1, token: lastToken)
    }

    /// The commands, in order, that put `beacon` on air with `family`'s commands.
    /// Legacy: parameters → data → scan response → enable. Extended: set 0 with legacy
    /// PDU properties (so phones without extended scanning see it too) → data → scan
    /// response → enable set 0. The scan response is only set for a scannable beacon.
    public static func commands(for beacon: DoorBeacon, family: CommandFamily) -> [(HCIPacket, Opcode)] {
        let scannable = beacon.pduType == .scannable
        switch family {
        case .legacy:
            var steps: [(HCIPacket, Opcode)] = [
                (LESetAdvertisingParametersCommand(
                    intervalMin: beacon.intervalUnits, intervalMax: beacon.intervalUnits,
                    type: scannable ? .scannableUndirected : .nonConnectableUndirected
                ).packet, LESetAdvertisingParametersCommand.opcode),
                (LESetAdvertisingDataCommand(data: beacon.advertisingData).packet, LESetAdvertisingDataCommand.opcode),
            ]
            if scannable {
                steps.append((LESetScanResponseDataCommand(data: beacon.scanResponseData).packet, LESetScanResponseDataCommand.opcode))
            }
            steps.append((LESetAdvertisingEnableCommand(enable: true).packet, LESetAdvertisingEnableCommand.opcode))
            return steps
        case .extended:
            let properties: LEAdvertisingEventProperties = scannable ? [.legacy, .scannable] : [.legacy]
            let handle: UInt8 = 0
            var steps: [(HCIPacket, Opcode)] = [
                (LESetExtendedAdvertisingParametersCommand(
                    handle: handle, properties: properties,
                    intervalMin: UInt32(beacon.intervalUnits), intervalMax: UInt32(beacon.intervalUnits)
                ).packet, LESetExtendedAdvertisingParametersCommand.opcode),
                (LESetExtendedAdvertisingDataCommand(handle: handle, data: beacon.advertisingData).packet,
                 LESetExtendedAdvertisingDataCommand.opcode),
            ]
            if scannable {
                steps.append((LESetExtendedScanResponseDataCommand(handle: handle, data: beacon.scanResponseData).packet,
                              LESetExtendedScanResponseDataCommand.opcode))
            }
            steps.append((LESetExtendedAdvertisingEnableCommand(
                enable: true, sets: [.init(handle: handle)]
            ).packet, LESetExtendedAdvertisingEnableCommand.opcode))
            return steps
        }
    }
}
