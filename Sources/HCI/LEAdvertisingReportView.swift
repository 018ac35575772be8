/// One advertising report read in place from its event's bytes, for the per-report hot
/// path: the fixed fields by value and the data as raw bytes borrowed from the packet.
/// `validate` and `forEach` are the one reader of the two report layouts: decoded events
/// (`LEAdvertisingReport.decodeReports`) are read through them too.
///
/// Handing out an `LEAdvertisingReport` costs an atomic retain and release of the
/// packet's storage for every copy of its `data` slice, and on the ingest path those
/// atomics (which also stall on every cache miss before them) cost more than the
/// decoding (docs/benchmarks.md, "Why the live path is cheap"). A view holds no reference at all. `data` is valid only during the call that
/// hands the view out: keep `makeReport()` instead.
public struct LEAdvertisingReportView {
    public var properties: LEAdvertisingReport.Properties
    public var dataStatus: LEAdvertisingReport.DataStatus
    public var addressType: AddressType
    public var address: BluetoothAddress
    public var primaryPHY: LEPhy = .le1M
    public var secondaryPHY: LEPhy = .none
    /// Advertising SID; `nil` when none was given.
    public var sid: UInt8?
    /// dBm; `nil` when not available.
    public var txPower: Int8?
    /// dBm; `nil` when not available.
    public var rssi: Int8?
    /// 1.25 ms units; 0 = no periodic advertising.
    public var periodicAdvertisingInterval: UInt16 = 0
    public var directAddressType: AddressType?
    public var directAddress: BluetoothAddress?
    public var data: UnsafeBufferPointer<UInt8>

    public var isConnectable: Bool { properties.contains(.connectable) }
    public var isScanResponse: Bool { properties.contains(.scanResponse) }
    public var isLegacy: Bool { properties.contains(.legacy) }

    /// The view of a decoded report, `data` borrowed from it.
    public static func withView<R>(of report: LEAdvertisingReport, _ body: (LEAdvertisingReportView) -> R) -> R {
        report.data.withUnsafeBufferPointer { data in
            body(LEAdvertisingReportView(
                properties: report.properties, dataStatus: report.dataStatus, addressType: report.addressType,
                address: report.address, primaryPHY: report.primaryPHY, secondaryPHY: report.secondaryPHY,
                sid: report.sid, txPower: report.txPower, rssi: report.rssi,
                periodicAdvertisingInterval: report.periodicAdvertisingInterval,
                directAddressType: report.directAddressType, directAddress: report.directAddress, data: data
            ))
        }
    }
}

extension LEAdvertisingReportView {
    /// What `validate` found in a valid event.
    public struct EventSummary: Hashable, Sendable {
        public var count: Int
        /// Every report is a legacy PDU or complete: none needs reassembly.
        public var allComplete: Bool
    }

    /// Checks an LE Advertising Report (`.advertisingReport`) or LE Extended Advertising
    /// Report (`.extendedAdvertisingReport`) subevent's parameters (the bytes after the
    /// subevent code) without decoding; `nil` for another subevent. This is the one check
    /// of the two layouts (`HCIEvent` decoding goes through it too): a bad event is
    /// rejected whole, so no report of it is ever handed out. The counted reports must
    /// end exactly at the end of the parameters; lengths are checked first, then the
    /// first reserved legacy event type. After a summary, `forEach` on the same bytes
    /// cannot fail.
    public static func validate(
        subevent: LESubeventCode, parameters: UnsafeBufferPointer<UInt8>
    ) throws(HCIDecodingError) -> EventSummary? {
        guard let layout = Layout(subevent) else { return nil }
        let context = HCIDecodingError.Context.leSubevent(subevent)
        switch walk(layout, parameters) {
        case .valid(let summary): return summary
        case .noCount: throw .truncated(context, needed: 1, available: 0)
        case .countDoesNotFit(let count): throw .countDoesNotFit(context, count: count)
        case .dataRunsPastEnd(let report): throw .dataRunsPastEnd(context, report: report)
        case .trailingBytes(let count): throw .trailingBytes(context, count: count)
        case .reservedLegacyEventType(let value): throw .invalidValue(context, field: .legacyEventType, value: Int(value))
        }
    }

    /// As `validate`, `nil` where it would throw: for the hot path, which hands a bad
    /// event to the decoder for its error and so needs no error value per event.
    public static func summary(subevent: LESubeventCode, parameters: UnsafeBufferPointer<UInt8>) -> EventSummary? {
        guard let layout = Layout(subevent), case .valid(let summary) = walk(layout, parameters) else { return nil }
        return summary
    }

    /// What `walk` found: a summary, or the first thing wrong.
    private enum Walk {
        case valid(EventSummary)
        case noCount
        case countDoesNotFit(Int)
        case dataRunsPastEnd(report: Int)
        case trailingBytes(Int)
        case reservedLegacyEventType(UInt8)
    }

    /// The one walk of an event's reports for `validate` and `summary`.
    @inline(__always)
    private static func walk(_ layout: Layout, _ parameters: UnsafeBufferPointer<UInt8>) -> Walk {
        guard let first = parameters.first else { return .noCount }
        let count = Int(first)
        // Each report needs at least its fixed part: reject impossible counts before walking.
        guard count >= 1, count * layout.fixedLength <= parameters.count - 1 else { return .countDoesNotFit(count) }
        var index = 1
        var allComplete = true
        var reservedEventType: UInt8?
        for report in 0 ..< count {
            guard parameters.count - index >= layout.fixedLength else { return .dataRunsPastEnd(report: report) }
            let length = Int(parameters[index + layout.lengthOffset])
            guard parameters.count - index - layout.fixedLength >= length else { return .dataRunsPastEnd(report: report) }
            switch layout {
            case .legacy:
                if LEAdvertisingReport.LegacyEventType(rawValue: parameters[index]).properties == nil, reservedEventType == nil {
                    reservedEventType = parameters[index]
                }
            case .extended:
                let eventType = UInt16(parameters[index]) | UInt16(parameters[index + 1]) << 8
                let properties = LEAdvertisingReport.Properties(rawValue: eventType)
                if !properties.contains(.legacy), eventType & LEAdvertisingReport.Properties.dataStatusMask != 0 {
                    allComplete = false
                }
            }
            index += layout.fixedLength + length
        }
        guard index == parameters.count else { return .trailingBytes(parameters.count - index) }
        if let reservedEventType { return .reservedLegacyEventType(reservedEventType) }
        return .valid(EventSummary(count: count, allComplete: allComplete))
    }

    /// Calls `body` for each report of parameters that `validate` accepted; stops at the
    /// first inconsistency instead of trapping if they were not.
    public static func forEach(
        subevent: LESubeventCode, parameters: UnsafeBufferPointer<UInt8>, _ body: (LEAdvertisingReportView) -> Void
    ) {
        guard let layout = Layout(subevent), let count = parameters.first.map(Int.init) else { return }
        var index = 1
        for _ in 0 ..< count {
            guard parameters.count - index >= layout.fixedLength else { return }
            let length = Int(parameters[index + layout.lengthOffset])
            let dataStart = index + layout.fixedLength - (layout == .legacy ? 1 : 0)
            guard parameters.count - index - layout.fixedLength >= length else { return }
            let data = UnsafeBufferPointer(rebasing: parameters[dataStart ..< dataStart + length])
            switch layout {
            case .legacy:
                guard let properties = LEAdvertisingReport.LegacyEventType(rawValue: parameters[index]).properties else { return }
                let rssi = Int8(bitPattern: parameters[index + layout.fixedLength - 1 + length])
                body(LEAdvertisingReportView(
                    properties: properties, dataStatus: .complete, addressType: AddressType(rawValue: parameters[index + 1]),
                    address: address(parameters, at: index + 2), sid: nil, txPower: nil,
                    rssi: rssi == LEAdvertisingReport.notAvailable ? nil : rssi, data: data
                ))
            case .extended:
                let eventType = UInt16(parameters[index]) | UInt16(parameters[index + 1]) << 8
                let sid = parameters[index + 11]
                let txPower = Int8(bitPattern: parameters[index + 12])
                let rssi = Int8(bitPattern: parameters[index + 13])
                let properties = LEAdvertisingReport.Properties(rawValue: eventType & ~LEAdvertisingReport.Properties.dataStatusMask)
                let isDirected = properties.contains(.directed)
                body(LEAdvertisingReportView(
                    properties: properties,
                    dataStatus: LEAdvertisingReport.DataStatus(
                        rawValue: UInt8(truncatingIfNeeded: (eventType & LEAdvertisingReport.Properties.dataStatusMask) >> 5)
                    ),
                    addressType: AddressType(rawValue: parameters[index + 2]), address: address(parameters, at: index + 3),
                    primaryPHY: LEPhy(rawValue: parameters[index + 9]), secondaryPHY: LEPhy(rawValue: parameters[index + 10]),
                    sid: sid == LEAdvertisingReport.noSID ? nil : sid,
                    txPower: txPower == LEAdvertisingReport.notAvailable ? nil : txPower,
                    rssi: rssi == LEAdvertisingReport.notAvailable ? nil : rssi,
                    periodicAdvertisingInterval: UInt16(parameters[index + 14]) | UInt16(parameters[index + 15]) << 8,
                    directAddressType: isDirected ? AddressType(rawValue: parameters[index + 16]) : nil,
                    directAddress: isDirected ? address(parameters, at: index + 17) : nil,
                    data: data
                ))
            }
            index += layout.fixedLength + length
        }
    }

    /// The report as a value of its own, its data copied.
    public func makeReport() -> LEAdvertisingReport {
        makeReport(data: Array(data)[...])
    }

    /// The report as a value with its fields and `data` (the same bytes as the view's,
    /// held elsewhere).
    public func makeReport(data: ArraySlice<UInt8>) -> LEAdvertisingReport {
        LEAdvertisingReport(
            properties: properties, dataStatus: dataStatus, addressType: addressType, address: address,
            primaryPHY: primaryPHY, secondaryPHY: secondaryPHY, sid: sid, txPower: txPower, rssi: rssi,
            periodicAdvertisingInterval: periodicAdvertisingInterval, directAddressType: directAddressType,
            directAddress: directAddress, data: data
        )
    }

    /// Where the two report layouts keep their data length (offsets from a report's start).
    private enum Layout: Equatable {
        /// Event type, address type, address, data length, data, RSSI.
        case legacy
        /// Event type(2), address type, address, PHYs(2), SID, TX power, RSSI, interval(2),
        /// direct address type and address, data length, data.
        case extended

        init?(_ subevent: LESubeventCode) {
            switch subevent {
            case .advertisingReport: self = .legacy
            case .extendedAdvertisingReport: self = .extended
            default: return nil
            }
        }

        /// Bytes per report besides its data.
        var fixedLength: Int { self == .legacy ? 10 : 24 }

        var lengthOffset: Int { self == .legacy ? 8 : 23 }
    }

    private static func address(_ bytes: UnsafeBufferPointer<UInt8>, at index: Int) -> BluetoothAddress {
        var value: UInt64 = 0
        for offset in 0 ..< 6 { value |= UInt64(bytes[index + offset]) << UInt64(8 * offset) }
        return BluetoothAddress(rawValue: value)
    }
}
