import HCI

public struct HostConfiguration: Hashable, Sendable {
    public var scan: ScanSettings
    /// How long a command may go unanswered before the controller counts as stuck.
    public var commandTimeout: Duration
    /// How often a scanning controller is asked something cheap, to notice a stall.
    public var probeInterval: Duration
    /// Waits before successive recovery attempts; the last one repeats.
    public var backoff: [Duration]
    /// After this many resets in a row that did not get back to scanning, the
    /// transport itself is closed and reopened.
    public var resetsBeforeReopen: Int
    public var eventMask: EventMask
    public var leEventMask: LEEventMask
    public var ownAddressType: AddressType
    public var reassembly: ExtendedReportReassembler.Limits
    /// Set as the controller's random address at bring-up when the controller has no
    /// usable public address (all-zero or absent BD_ADDR): the identity address the
    /// gateway pairs from (docs/pairing.md, "The gateway's address"). Nil: none is set.
    public var staticRandomAddress: BluetoothAddress?

    public init(scan: ScanSettings = ScanSettings(), commandTimeout: Duration = .seconds(2),
                probeInterval: Duration = .seconds(10),
                backoff: [Duration] = [.milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2), .seconds(4)],
                resetsBeforeReopen: Int = 3, eventMask: EventMask = .gatewayDefault,
                leEventMask: LEEventMask = .gatewayDefault, ownAddressType: AddressType = .publicDevice,
                reassembly: ExtendedReportReassembler.Limits = .init(), staticRandomAddress: BluetoothAddress? = nil) {
        self.scan = scan
        self.commandTimeout = commandTimeout
        self.probeInterval = probeInterval
        self.backoff = backoff
        self.resetsBeforeReopen = resetsBeforeReopen
        self.eventMask = eventMask
        self.leEventMask = leEventMask
        self.ownAddressType = ownAddressType
        self.reassembly = reassembly
        self.staticRandomAddress = staticRandomAddress
    }

    /// The wait before recovery attempt `attempt` (1-based).
    public func backoff(forAttempt attempt: Int) -> Duration {
        guard let last = backoff.last else { return .zero }
        let index = max(attempt, 1) - 1
        return index < backoff.count ? backoff[index] : last
    }
}
