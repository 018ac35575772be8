// Scanning, in both command families.

/// Legacy: LE Set Scan Parameters. Interval and window in 0.625 ms units (0x0004–0x4000).
public struct LESetScanParametersCommand: HCICommand, HCIFieldLayout {
    public static let opcode = Opcode.leSetScanParameters
    public static let expectedResponse = HCIExpectedResponse.commandComplete(returnParametersLength: 1)
    public static var fields: [HCIField<Self>] {
        [.field(\.scanType), .field(\.interval), .field(\.window), .field(\.ownAddressType), .field(\.filterPolicy)]
    }

    public var scanType = LEScanType.passive
    public var interval: UInt16 = 0
    public var window: UInt16 = 0
    public var ownAddressType = AddressType.publicDevice
    public var filterPolicy = ScanningFilterPolicy.acceptAll

    public init() {}

    public init(scanType: LEScanType, interval: UInt16, window: UInt16,
                ownAddressType: AddressType = .publicDevice, filterPolicy: ScanningFilterPolicy = .acceptAll) {
        self.scanType = scanType
        self.interval = interval
        self.window = window
        self.ownAddressType = ownAddressType
        self.filterPolicy = filterPolicy
    }
}

/// Legacy: LE Set Scan Enable.
public struct LESetScanEnableCommand: HCICommand, HCIFieldLayout {
    public static let opcode = Opcode.leSetScanEnable
    public static let expectedResponse = HCIExpectedResponse.commandComplete(returnParametersLength: 1)
    public static var fields: [HCIField<Self>] { [.field(\.enable), .field(\.filterDuplicates)] }
    public var enable = false
    public var filterDuplicates = false

    public init() {}

    public init(enable: Bool, filterDuplicates: Bool = false) {
        self.enable = enable
        self.filterDuplicates = filterDuplicates
    }
}

/// Extended: LE Set Extended Scan Parameters, one entry per PHY in `phys` order
/// (1M first, then Coded).
public struct LESetExtendedScanParametersCommand: HCICommand, HCIFieldLayout {
    public static let opcode = Opcode.leSetExtendedScanParameters
    public static let expectedResponse = HCIExpectedResponse.commandComplete(returnParametersLength: 1)
    public static var fields: [HCIField<Self>] {
        [.field(\.ownAddressType), .field(\.filterPolicy), .phyEntries([(.le1M, \.le1M), (.leCoded, \.leCoded)])]
    }

    public struct PHYParameters: Hashable, Sendable, HCIFieldLayout {
        public static var fields: [HCIField<Self>] { [.field(\.scanType), .field(\.interval), .field(\.window)] }
        public var scanType = LEScanType.passive
        public var interval: UInt16 = 0
        public var window: UInt16 = 0
        public init() {}
        public init(scanType: LEScanType, interval: UInt16, window: UInt16) {
            self.scanType = scanType
            self.interval = interval
            self.window = window
        }
    }

    public var ownAddressType = AddressType.publicDevice
    public var filterPolicy = ScanningFilterPolicy.acceptAll
    /// Parameters on the 1M PHY (always scanned here).
    public var le1M: PHYParameters?
    /// Parameters on the Coded PHY, for long-range tags; `nil` = do not scan it.
    public var leCoded: PHYParameters?

    public init() {}

    public init(ownAddressType: AddressType = .publicDevice, filterPolicy: ScanningFilterPolicy = .acceptAll,
                le1M: PHYParameters?, leCoded: PHYParameters? = nil) {
        self.ownAddressType = ownAddressType
        self.filterPolicy = filterPolicy
        self.le1M = le1M
        self.leCoded = leCoded
    }

    public var phys: LEPhys {
        var phys: LEPhys = []
        if le1M != nil { phys.insert(.le1M) }
        if leCoded != nil { phys.insert(.leCoded) }
        return phys
    }
}

/// Extended: LE Set Extended Scan Enable. Duration (10 ms units) and period (1.28 s
/// units) zero mean "scan until disabled".
public struct LESetExtendedScanEnableCommand: HCICommand, HCIFieldLayout {
    public static let opcode = Opcode.leSetExtendedScanEnable
    public static let expectedResponse = HCIExpectedResponse.commandComplete(returnParametersLength: 1)
    public static var fields: [HCIField<Self>] {
        [.field(\.enable), .field(\.filterDuplicates), .field(\.duration), .field(\.period)]
    }

    public var enable = false
    /// 0 off, 1 on, 2 on and reset each period.
    public var filterDuplicates: UInt8 = 0
    public var duration: UInt16 = 0
    public var period: UInt16 = 0

    public init() {}

    public init(enable: Bool, filterDuplicates: UInt8 = 0, duration: UInt16 = 0, period: UInt16 = 0) {
        self.enable = enable
        self.filterDuplicates = filterDuplicates
        self.duration = duration
        self.period = period
    }
}
