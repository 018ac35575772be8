extension HCIEvent {
    /// Decodes an event packet. Fixed-size events may carry extra trailing bytes
    /// (later spec versions append fields); lists must fit exactly.
    public init(_ packet: HCIPacket) throws(HCIDecodingError) {
        guard packet.type == .event else { throw .wrongPacketType(packet.type) }
        let payload = packet.payload
        guard payload.count >= 2 else { throw .truncated(.packetHeader, needed: 2, available: payload.count) }
        let code = EventCode(rawValue: payload[0])
        let declared = Int(payload[1])
        guard declared == payload.count - 2 else {
            throw .lengthMismatch(.event(code), declared: declared, actual: payload.count - 2)
        }
        try self.init(code: code, parameters: payload[2...])
    }

    /// Decodes an event from its code and parameters.
    public init(code: EventCode, parameters: ArraySlice<UInt8>) throws(HCIDecodingError) {
        var reader = HCIByteReader(parameters, context: .event(code))
        switch code {
        case .commandComplete:
            let credits = try reader.u8()
            let opcode = Opcode(rawValue: try reader.u16())
            self = .commandComplete(HCICommandComplete(numberOfCommandPackets: credits, opcode: opcode, returnParameters: reader.rest()))
        case .commandStatus:
            let status = HCIStatus(rawValue: try reader.u8())
            let credits = try reader.u8()
            let opcode = Opcode(rawValue: try reader.u16())
            self = .commandStatus(HCICommandStatus(status: status, numberOfCommandPackets: credits, opcode: opcode))
        case .disconnectionComplete:
            self = .disconnectionComplete(HCIDisconnectionComplete(
                status: HCIStatus(rawValue: try reader.u8()), connectionHandle: try reader.u16() & 0x0FFF,
                reason: HCIStatus(rawValue: try reader.u8())
            ))
        case .numberOfCompletedPackets:
            let count = Int(try reader.u8())
            guard count * 4 == reader.remaining else { throw .countDoesNotFit(.event(code), count: count) }
            var entries = [HCICompletedPackets]()
            entries.reserveCapacity(count)
            for _ in 0 ..< count {
                entries.append(HCICompletedPackets(connectionHandle: try reader.u16() & 0x0FFF, count: try reader.u16()))
            }
            self = .numberOfCompletedPackets(entries)
        case .hardwareError:
            self = .hardwareError(code: try reader.u8())
        case .leMeta:
            let subevent = LESubeventCode(rawValue: try reader.u8())
            self = .leMeta(try LEMetaEvent(subevent: subevent, parameters: reader.rest()))
        default:
            self = .unknown(code: code, parameters: parameters)
        }
    }
}

extension LEMetaEvent {
    /// Decodes a subevent from the bytes after the subevent code.
    public init(subevent: LESubeventCode, parameters: ArraySlice<UInt8>) throws(HCIDecodingError) {
        switch subevent {
        case .advertisingReport:
            self = .advertisingReport(try LEAdvertisingReport.decodeLegacyReports(parameters))
        case .extendedAdvertisingReport:
            self = .extendedAdvertisingReport(try LEAdvertisingReport.decodeExtendedReports(parameters))
        case .connectionComplete, .enhancedConnectionComplete, .enhancedConnectionCompleteV2:
            self = .connectionComplete(try LEConnectionComplete(subevent: subevent, parameters: parameters))
        case .connectionUpdateComplete:
            var reader = HCIByteReader(parameters, context: .leSubevent(subevent))
            self = .connectionUpdateComplete(LEConnectionUpdateComplete(
                status: HCIStatus(rawValue: try reader.u8()), connectionHandle: try reader.u16() & 0x0FFF,
                connectionInterval: try reader.u16(), peripheralLatency: try reader.u16(),
                supervisionTimeout: try reader.u16()
            ))
        default:
            self = .unknown(subevent: subevent, parameters: parameters)
        }
    }
}

extension LEConnectionComplete {
    init(subevent: LESubeventCode, parameters: ArraySlice<UInt8>) throws(HCIDecodingError) {
        var reader = HCIByteReader(parameters, context: .leSubevent(subevent))
        format = switch subevent {
        case .connectionComplete: .legacy
        case .enhancedConnectionComplete: .enhanced
        default: .enhancedV2
        }
        status = HCIStatus(rawValue: try reader.u8())
        connectionHandle = try reader.u16() & 0x0FFF
        role = Role(rawValue: try reader.u8())
        peerAddressType = AddressType(rawValue: try reader.u8())
        peerAddress = try reader.address()
        if format == .legacy {
            localResolvablePrivateAddress = BluetoothAddress(rawValue: 0)
            peerResolvablePrivateAddress = BluetoothAddress(rawValue: 0)
        } else {
            localResolvablePrivateAddress = try reader.address()
            peerResolvablePrivateAddress = try reader.address()
        }
        connectionInterval = try reader.u16()
        peripheralLatency = try reader.u16()
        supervisionTimeout = try reader.u16()
        centralClockAccuracy = try reader.u8()
        if format == .enhancedV2 {
            advertisingHandle = try reader.u8()
            syncHandle = try reader.u16()
        } else {
            advertisingHandle = 0xFF
            syncHandle = 0xFFFF
        }
    }
}
