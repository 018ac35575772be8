/// Which combinations of link-layer states the controller can be in at once
/// (LE Read Supported States), one bit per combination.
public struct LESupportedStates: OptionSet, Hashable, Sendable {
    public var rawValue: UInt64
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    public static let passiveScanning = LESupportedStates(rawValue: 1 << 4)
    public static let activeScanning = LESupportedStates(rawValue: 1 << 5)
    public static let initiating = LESupportedStates(rawValue: 1 << 6)
    public static let connectableAdvertising = LESupportedStates(rawValue: 1 << 2)
    public static let peripheral = LESupportedStates(rawValue: 1 << 7)
    public static let connectableAdvertisingAndPassiveScanning = LESupportedStates(rawValue: 1 << 10)
    public static let connectableAdvertisingAndActiveScanning = LESupportedStates(rawValue: 1 << 14)
    public static let passiveScanningAndInitiating = LESupportedStates(rawValue: 1 << 22)
    public static let activeScanningAndInitiating = LESupportedStates(rawValue: 1 << 23)
    public static let passiveScanningAndCentral = LESupportedStates(rawValue: 1 << 24)
    public static let activeScanningAndCentral = LESupportedStates(rawValue: 1 << 25)
    public static let passiveScanningAndPeripheral = LESupportedStates(rawValue: 1 << 26)
    public static let activeScanningAndPeripheral = LESupportedStates(rawValue: 1 << 27)
    public static let connectableAdvertisingAndInitiating = LESupportedStates(rawValue: 1 << 32)
    public static let connectableAdvertisingAndCentral = LESupportedStates(rawValue: 1 << 35)
    public static let connectableAdvertisingAndPeripheral = LESupportedStates(rawValue: 1 << 38)

    /// Whether a pending LE Create Connection may run while scanning in this mode.
    /// Controllers that cannot do both reject one of the commands with "command disallowed".
    public func canScanWhileInitiating(active: Bool) -> Bool {
        contains(active ? .activeScanningAndInitiating : .passiveScanningAndInitiating)
    }

    /// Whether scanning may continue while connected as central.
    public func canScanWhileCentral(active: Bool) -> Bool {
        contains(active ? .activeScanningAndCentral : .passiveScanningAndCentral)
    }

    /// Whether connectable advertising (enrolment) may run while scanning in this mode.
    public func canAdvertiseConnectableWhileScanning(active: Bool) -> Bool {
        contains(active ? .connectableAdvertisingAndActiveScanning : .connectableAdvertisingAndPassiveScanning)
    }

    /// Whether connectable advertising may run while a create-connection is pending
    /// (persistent connect's accept list armed); otherwise initiation pauses for the
    /// enrolment window.
    public var canAdvertiseConnectableWhileInitiating: Bool { contains(.connectableAdvertisingAndInitiating) }

    /// Whether connectable advertising may run while connected as peripheral (a tag taking
    /// a second central while one holds a link).
    public var canAdvertiseConnectableWhilePeripheral: Bool { contains(.connectableAdvertisingAndPeripheral) }

    /// What a controller that does not answer LE Read Supported States is assumed to
    /// support: scanning and initiating alone, nothing combined (the cautious choice).
    public static let assumedWhenUnknown: LESupportedStates = [.passiveScanning, .activeScanning, .initiating]
}
