import HCI

/// The ATT Error Response PDU (Core Vol 3 Part F §3.4.1.1): the opcode of the request it
/// answers, the handle in error, the code.
public enum ATTErrorResponse {
    public static func pdu(answering request: ATTOpcode, handle: UInt16, code: ATTErrorCode) -> [UInt8] {
        var pdu = [ATTOpcode.errorResponse.rawValue, request.rawValue]
        pdu.appendLE(handle)
        pdu.append(code.rawValue)
        return pdu
    }

    /// "Request Not Supported" for a peer's request that has no server to answer it;
    /// nil for what is never answered (commands, a confirmation, an empty PDU).
    public static func requestNotSupported(answering request: [UInt8]) -> [UInt8]? {
        guard let first = request.first else { return nil }
        let opcode = ATTOpcode(rawValue: first)
        guard !opcode.isCommand, opcode != .handleValueConfirmation else { return nil }
        return pdu(answering: opcode, handle: 0, code: .requestNotSupported)
    }
}
