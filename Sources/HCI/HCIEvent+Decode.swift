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
        let context = HCIDecodingError.Context.event(code)
        switch code {
        case .commandComplete:
            self = .commandComplete(try HCICommandComplete(decoding: parameters, context: context, exact: false))
        case .commandStatus:
            self = .commandStatus(try HCICommandStatus(decoding: parameters, context: context, exact: false))
        case .disconnectionComplete:
            self = .disconnectionComplete(try HCIDisconnectionComplete(decoding: parameters, context: context, exact: false))
        case .numberOfCompletedPackets:
            self = .numberOfCompletedPackets(try HCICompletedPackets.list.decode(parameters, context: context))
        case .hardwareError:
            self = .hardwareError(code: try UInt8.codec.decode(parameters, context: context))
        case .encryptionChange, .encryptionChangeV2:
            var event = HCIEncryptionChange()
            event.format = code == .encryptionChange ? .v1 : .v2
            var reader = HCIByteReader(parameters, context: context)
            try event.decodeFields(from: &reader)
            self = .encryptionChange(event)
        case .encryptionKeyRefreshComplete:
            self = .encryptionKeyRefreshComplete(try HCIEncryptionKeyRefreshComplete(decoding: parameters, context: context, exact: false))
        case .leMeta:
            var reader = HCIByteReader(parameters, context: context)
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
        let context = HCIDecodingError.Context.leSubevent(subevent)
        switch subevent {
        case .advertisingReport:
            self = .advertisingReport(try LEAdvertisingReport.decodeReports(subevent: subevent, parameters: parameters))
        case .extendedAdvertisingReport:
            self = .extendedAdvertisingReport(try LEAdvertisingReport.decodeReports(subevent: subevent, parameters: parameters))
        case .connectionComplete, .enhancedConnectionComplete, .enhancedConnectionCompleteV2:
            var event = LEConnectionComplete()
            event.format = subevent == .connectionComplete ? .legacy : subevent == .enhancedConnectionComplete ? .enhanced : .enhancedV2
            var reader = HCIByteReader(parameters, context: context)
            try event.decodeFields(from: &reader)
            self = .connectionComplete(event)
        case .connectionUpdateComplete:
            self = .connectionUpdateComplete(try LEConnectionUpdateComplete(decoding: parameters, context: context, exact: false))
        case .longTermKeyRequest:
            self = .longTermKeyRequest(try LELongTermKeyRequest(decoding: parameters, context: context, exact: false))
        default:
            self = .unknown(subevent: subevent, parameters: parameters)
        }
    }
}

extension HCICompletedPackets {
    /// Number Of Completed Packets: a count, then the entries filling the event.
    static var list: HCIFieldCodec<[HCICompletedPackets]> { .list(maximum: 63) }
}
