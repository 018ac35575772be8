// Scanning, in both command families.

/// Legacy: LE Set Scan Parameters. Interval and window in 0.625 ms units (0x0004–0x4000).
public struct LESetScanParametersCommand: HCICommand {
    public static let opcode = Opcode.leSetScanParameters
    public static let expectedResponse = HCIExpectedResponse.commandComplete(returnParametersLength: 1)
    public var scanType: LEScanType
    public var interval: UInt16
    public var window: UInt16
    public var ownAddressType: AddressType
    public var filterPolicy: ScanningFilterPolicy

    public init(scanType: LEScanType, interval: UInt16, window: UInt16,
                ownAddressType: AddressType = .publicDevice, filterPolicy: ScanningFilterPolicy = .acceptAll) {
        self.scanType = scanType
        self.interval = interval
        self.window = window
        self.ownAddressType = ownAddressType
        self.filterPolicy = filterPolicy
    }

    public func encodeParameters(into bytes: inout [UInt8]) {
        bytes.append(scanType.rawValue)
        bytes.appendLE(interval)
        bytes.appendLE(window)
        bytes.append(ownAddressType.rawValue)
        bytes.append(filterPolicy.rawValue)
    }

    public init(parameters: ArraySlice<UInt8>) throws(HCIDecodingError) {
        var reader = HCIByteReader(parameters, context: .command(Self.opcode))
        scanType = LEScanType(rawValue: try reader.u8())
        interval = try reader.u16()
        window = try reader.u16()
        ownAddressType = AddressType(rawValue: try reader.u8())
        filterPolicy = ScanningFilterPolicy(rawValue: try reader.u8())
        try reader.requireEnd()
    }
}

/// Legacy: LE Set Scan Enable.
public struct LESetScanEnableCommand: HCICommand {
    public static let opcode = Opcode.leSetScanEnable
    public static let expectedResponse = HCIExpectedResponse.commandComplete(returnParametersLength: 1)
    public var enable: Bool
    public var filterDuplicates: Bool

    public init(enable: Bool, filterDuplicates: Bool = false) {
        self.enable = enable
        self.filterDuplicates = filterDuplicates
    }

    public func encodeParameters(into bytes: inout [UInt8]) {
        bytes.append(enable ? 1 : 0)
        bytes.append(filterDuplicates ? 1 : 0)
    }

    public init(parameters: ArraySlice<UInt8>) throws(HCIDecodingError) {
        var reader = HCIByteReader(parameters, context: .command(Self.opcode))
        enable = try reader.u8() != 0
        filterDuplicates = try reader.u8() != 0
        try reader.requireEnd()
    }
}

/// Extended: LE Set Extended Scan Parameters, one entry per PHY in `phys` order
/// (1M first, then Coded).
public struct LESetExtendedScanParametersCommand: HCICommand {
    public static let opcode = Opcode.leSetExtendedScanParameters
    public static let expectedResponse = HCIExpectedResponse.commandComplete(returnParametersLength: 1)

    public struct PHYParameters: Hashable, Sendable {
        public var scanType: LEScanType
        public var interval: UInt16
        public var window: UInt16
        public init(scanType: LEScanType, interval: UInt16, window: UInt16) {
            self.scanType = scanType
            self.interval = interval
            self.window = window
        }
    }

    public var ownAddressType: AddressType
    public var filterPolicy: ScanningFilterPolicy
    /// Parameters on the 1M PHY (always scanned here).
    public var le1M: PHYParameters?
    /// Parameters on the Coded PHY, for long-range tags; `nil` = do not scan it.
    public var leCoded: PHYParameters?

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

    public func encodeParameters(into bytes: inout [UInt8]) {
        bytes.append(ownAddressType.rawValue)
        bytes.append(filterPolicy.rawValue)
        bytes.append(phys.rawValue)
        for entry in [le1M, leCoded] {
            guard let entry else { continue }
            bytes.append(entry.scanType.rawValue)
            bytes.appendLE(entry.interval)
            bytes.appendLE(entry.window)
        }
    }

    public init(parameters: ArraySlice<UInt8>) throws(HCIDecodingError) {
        var reader = HCIByteReader(parameters, context: .command(Self.opcode))
        ownAddressType = AddressType(rawValue: try reader.u8())
        filterPolicy = ScanningFilterPolicy(rawValue: try reader.u8())
        let phys = LEPhys(rawValue: try reader.u8())
        guard phys.subtracting([.le1M, .leCoded]).isEmpty else {
            throw .invalidValue(reader.context, field: .phys, value: Int(phys.rawValue))
        }
        func entry(_ reader: inout HCIByteReader) throws(HCIDecodingError) -> PHYParameters {
            PHYParameters(scanType: LEScanType(rawValue: try reader.u8()), interval: try reader.u16(), window: try reader.u16())
        }
        le1M = phys.contains(.le1M) ? try entry(&reader) : nil
        leCoded = phys.contains(.leCoded) ? try entry(&reader) : nil
        try reader.requireEnd()
    }
}

/// Extended: LE Set Extended Scan Enable. Duration (10 ms units) and period (1.28 s
/// units) zero mean "scan until disabled".
public struct LESetExtendedScanEnableCommand: HCICommand {
    public static let opcode = Opcode.leSetExtendedScanEnable
    public static let expectedResponse = HCIExpectedResponse.commandComplete(returnParametersLength: 1)
    public var enable: Bool
    /// 0 off, 1 on, 2 on and reset each period.
    public var filterDuplicates: UInt8
    public var duration: UInt16
    public var period: UInt16

    public init(enable: Bool, filterDuplicates: UInt8 = 0, duration: UInt16 = 0, period: UInt16 = 0) {
        self.enable = enable
        self.filterDuplicates = filterDuplicates
        self.duration = duration
        self.period = period
    }

    public func encodeParameters(into bytes: inout [UInt8]) {
        bytes.append(enable ? 1 : 0)
        bytes.append(filterDuplicates)
        bytes.appendLE(duration)
        bytes.appendLE(period)
    }

    public init(parameters: ArraySlice<UInt8>) throws(HCIDecodingError) {
        var reader = HCIByteReader(parameters, context: .command(Self.opcode))
        enable = try reader.u8() != 0
        filterDuplicates = try reader.u8()
        duration = try reader.u16()
        period = try reader.u16()
        try reader.requireEnd()
    }
}
