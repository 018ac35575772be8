import HCI

/// The search requests over a handle range (Core Vol 3 Part F §3.4.3, §3.4.4): Find
/// Information, Find By Type Value, Read By Type, Read By Group Type. Each answer holds
/// as many entries of one length as fit in ATT_MTU; the client asks again from after
/// the last one.
extension GATTServer {
    func discovery(_ opcode: ATTOpcode, _ pdu: [UInt8], security: ATTLinkSecurity) -> Action {
        var reader = HCIByteReader(pdu[1...], context: .aboveHCI)
        guard pdu.count >= 5, let start = try? reader.u16(), let end = try? reader.u16() else {
            return errorResponse(opcode, 0, .invalidPDU)
        }
        let rest = pdu[5...]
        switch opcode {
        case .findInformationRequest:
            guard rest.isEmpty else { return errorResponse(opcode, 0, .invalidPDU) }
        case .findByTypeValueRequest:
            guard rest.count >= 2 else { return errorResponse(opcode, 0, .invalidPDU) }
        default:
            guard rest.count == 2 || rest.count == 16 else { return errorResponse(opcode, 0, .invalidPDU) }
        }
        guard start >= 1, start <= end else { return errorResponse(opcode, start, .invalidHandle) }
        let inRange = database.attributes.dropFirst(Int(start) - 1).prefix { $0.handle <= end }
        switch opcode {
        case .findInformationRequest:
            return findInformation(inRange, start: start)
        case .findByTypeValueRequest:
            let type = GATTUUID(uuid16: UInt16(rest[rest.startIndex]) | UInt16(rest[rest.startIndex + 1]) << 8)
            return findByTypeValue(inRange, type: type, value: rest.dropFirst(2), start: start, security: security)
        case .readByTypeRequest:
            return readByType(inRange, type: GATTUUID(littleEndian: rest) ?? .primaryService, start: start, security: security)
        default:
            let type = GATTUUID(littleEndian: rest) ?? .characteristic
            guard type == .primaryService || type == .secondaryService else { return errorResponse(opcode, start, .unsupportedGroupType) }
            return readByGroupType(inRange, type: type, start: start, security: security)
        }
    }

    /// Handles and types, all of one UUID size (format 1: 16-bit, 2: 128-bit).
    private func findInformation(_ attributes: ArraySlice<GATTAttribute>, start: UInt16) -> Action {
        var entries = [UInt8]()
        var uuidLength: Int?
        for attribute in attributes {
            let uuid = attribute.type.attBytes
            guard uuidLength == nil || uuidLength == uuid.count, 2 + entries.count + 2 + uuid.count <= mtu else { break }
            uuidLength = uuid.count
            entries.appendLE(attribute.handle)
            entries.append(contentsOf: uuid)
        }
        guard let uuidLength else { return errorResponse(.findInformationRequest, start, .attributeNotFound) }
        return .send([ATTOpcode.findInformationResponse.rawValue, uuidLength == 2 ? 0x01 : 0x02] + entries)
    }

    /// Handle and group end of each attribute of `type` whose value is `value`. An
    /// attribute the link may not read never matches: a match would tell its value.
    private func findByTypeValue(_ attributes: ArraySlice<GATTAttribute>, type: GATTUUID, value: ArraySlice<UInt8>,
                                 start: UInt16, security: ATTLinkSecurity) -> Action {
        var entries = [UInt8]()
        for attribute in attributes where attribute.type == type {
            guard case .value(let current) = readout(attribute, security: security), current[...] == value else { continue }
            guard 1 + entries.count + 4 <= mtu else { break }
            entries.appendLE(attribute.handle)
            if case .service(let end, _) = attribute.kind { entries.appendLE(end) } else { entries.appendLE(attribute.handle) }
        }
        guard !entries.isEmpty else { return errorResponse(.findByTypeValueRequest, start, .attributeNotFound) }
        return .send([ATTOpcode.findByTypeValueResponse.rawValue] + entries)
    }

    /// Handle and value of each attribute of `type`, values of one length, each cut to
    /// min(253, ATT_MTU - 4). The first one's refusal is the answer; a later one ends the list.
    private func readByType(_ attributes: ArraySlice<GATTAttribute>, type: GATTUUID, start: UInt16,
                            security: ATTLinkSecurity) -> Action {
        var entries = [UInt8]()
        var valueLength: Int?
        for attribute in attributes where attribute.type == type {
            let readout = readout(attribute, security: security)
            guard case .value(let value) = readout else {
                if valueLength == nil, case .refused(let code) = readout { return errorResponse(.readByTypeRequest, attribute.handle, code) }
                break
            }
            let cut = value.prefix(min(253, mtu - 4))
            guard valueLength == nil || valueLength == cut.count, 2 + entries.count + 2 + cut.count <= mtu else { break }
            valueLength = cut.count
            entries.appendLE(attribute.handle)
            entries.append(contentsOf: cut)
        }
        guard let valueLength else { return errorResponse(.readByTypeRequest, start, .attributeNotFound) }
        return .send([ATTOpcode.readByTypeResponse.rawValue, UInt8(2 + valueLength)] + entries)
    }

    /// Handle, group end and UUID of each service declaration of `type`, UUIDs of one size.
    private func readByGroupType(_ attributes: ArraySlice<GATTAttribute>, type: GATTUUID, start: UInt16,
                                 security: ATTLinkSecurity) -> Action {
        var entries = [UInt8]()
        var valueLength: Int?
        for attribute in attributes where attribute.type == type {
            guard case .service(let end, _) = attribute.kind, case .value(let value) = readout(attribute, security: security) else { break }
            let cut = value.prefix(min(251, mtu - 6))
            guard valueLength == nil || valueLength == cut.count, 2 + entries.count + 4 + cut.count <= mtu else { break }
            valueLength = cut.count
            entries.appendLE(attribute.handle)
            entries.appendLE(end)
            entries.append(contentsOf: cut)
        }
        guard let valueLength else { return errorResponse(.readByGroupTypeRequest, start, .attributeNotFound) }
        return .send([ATTOpcode.readByGroupTypeResponse.rawValue, UInt8(4 + valueLength)] + entries)
    }
}
