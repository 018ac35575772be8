// Encoding events: what a controller sends. Used by tests, fake controllers and the
// btsnoop transport's stand-in answers.

extension HCIEvent {
    /// The event as a packet. Parameters longer than 255 bytes (only possible for
    /// hand-built report lists) are cut so the length byte stays truthful.
    public var packet: HCIPacket {
        var bytes: [UInt8] = [0, 0]
        let code: EventCode
        switch self {
        case .commandComplete(let event):
            code = .commandComplete
            event.encodeFields(into: &bytes)
        case .commandStatus(let event):
            code = .commandStatus
            event.encodeFields(into: &bytes)
        case .disconnectionComplete(let event):
            code = .disconnectionComplete
            event.encodeFields(into: &bytes)
        case .numberOfCompletedPackets(let entries):
            code = .numberOfCompletedPackets
            HCICompletedPackets.list.write(entries, &bytes)
        case .hardwareError(let hardwareCode):
            code = .hardwareError
            bytes.append(hardwareCode)
        case .encryptionChange(let event):
            code = event.format == .v1 ? .encryptionChange : .encryptionChangeV2
            event.encodeFields(into: &bytes)
        case .encryptionKeyRefreshComplete(let event):
            code = .encryptionKeyRefreshComplete
            event.encodeFields(into: &bytes)
        case .leMeta(let event):
            code = .leMeta
            event.encode(into: &bytes)
        case .unknown(let unknownCode, let parameters):
            code = unknownCode
            bytes.append(contentsOf: parameters)
        }
        if bytes.count > 257 { bytes.removeLast(bytes.count - 257) }
        bytes[0] = code.rawValue
        bytes[1] = UInt8(bytes.count - 2)
        return HCIPacket(type: .event, payload: bytes)
    }

    /// A success answer to `command`, as a stand-in controller gives it: a Command
    /// Complete with zero-filled return parameters of the right length (status 0 =
    /// success) or a success Command Status. `nil` for packets that are not commands.
    /// Unknown opcodes get a Command Complete with the status byte alone.
    public static func successResponse(to command: HCIPacket) -> HCIPacket? {
        guard let (opcode, _) = try? HCICommandPacket.split(command) else { return nil }
        switch opcode.expectedResponse {
        case .commandStatus:
            return HCIEvent.commandStatus(HCICommandStatus(status: .success, opcode: opcode)).packet
        case .commandComplete(let length):
            return HCIEvent.commandComplete(HCICommandComplete(
                opcode: opcode, returnParameters: ArraySlice(repeatElement(0, count: length))
            )).packet
        case nil:
            return HCIEvent.commandComplete(HCICommandComplete(opcode: opcode, returnParameters: [0])).packet
        }
    }
}

extension LEMetaEvent {
    public var subevent: LESubeventCode {
        switch self {
        case .advertisingReport: .advertisingReport
        case .extendedAdvertisingReport: .extendedAdvertisingReport
        case .connectionComplete(let event):
            switch event.format {
            case .legacy: .connectionComplete
            case .enhanced: .enhancedConnectionComplete
            case .enhancedV2: .enhancedConnectionCompleteV2
            }
        case .connectionUpdateComplete: .connectionUpdateComplete
        case .longTermKeyRequest: .longTermKeyRequest
        case .unknown(let subevent, _): subevent
        }
    }

    /// Appends the subevent code and parameters.
    public func encode(into bytes: inout [UInt8]) {
        bytes.append(subevent.rawValue)
        switch self {
        case .advertisingReport(let reports):
            bytes.append(UInt8(min(reports.count, 255)))
            for report in reports.prefix(255) { report.encodeLegacy(into: &bytes) }
        case .extendedAdvertisingReport(let reports):
            bytes.append(UInt8(min(reports.count, 255)))
            for report in reports.prefix(255) { report.encodeExtended(into: &bytes) }
        case .connectionComplete(let event):
            event.encodeFields(into: &bytes)
        case .connectionUpdateComplete(let event):
            event.encodeFields(into: &bytes)
        case .longTermKeyRequest(let event):
            event.encodeFields(into: &bytes)
        case .unknown(_, let parameters):
            bytes.append(contentsOf: parameters)
        }
    }
}
