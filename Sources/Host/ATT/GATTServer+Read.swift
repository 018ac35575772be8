import HCI

/// Read, Read Blob and Read Multiple (Core Vol 3 Part F §3.4.4): a value the link may
/// read, cut to what one response holds (ATT_MTU - 1).
extension GATTServer {
    func read(_ opcode: ATTOpcode, _ pdu: [UInt8], security: ATTLinkSecurity) -> Action {
        var reader = HCIByteReader(pdu[1...], context: .aboveHCI)
        let expected = switch opcode {
        case .readRequest: 3
        case .readBlobRequest: 5
        default: pdu.count >= 5 && pdu.count % 2 == 1 ? pdu.count : 0
        }
        guard pdu.count == expected else { return errorResponse(opcode, 0, .invalidPDU) }
        var answer = [opcode.expectedResponse.rawValue]
        while let handle = try? reader.u16() {
            guard let attribute = database.attribute(handle) else { return errorResponse(opcode, handle, .invalidHandle) }
            let value: [UInt8]
            switch readout(attribute, security: security) {
            case .refused(let code): return errorResponse(opcode, handle, code)
            case .value(let bytes): value = bytes
            }
            if opcode == .readBlobRequest {
                guard let offset = try? reader.u16(), Int(offset) <= value.count else { return errorResponse(opcode, handle, .invalidOffset) }
                answer.append(contentsOf: value[Int(offset)...])
            } else {
                answer.append(contentsOf: value)
            }
        }
        return .send(Array(answer.prefix(mtu)))
    }
}
