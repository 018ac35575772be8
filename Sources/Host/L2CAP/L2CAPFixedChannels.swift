import HCI

/// The LE fixed channels of one controller's connections (Core Vol 3 Part A §2.1):
/// ATT goes up to the bearer; the LE signalling channel and the security manager are
/// answered here so a tag can never leave us waiting, and anything else is dropped and
/// counted.
///
/// Signalling: a Connection Parameter Update Request gets a Response (accepted when the
/// parameters are valid, rejected otherwise; accepting lets the caller apply them with
/// LE Connection Update); an LE credit-based connection request is refused (no SPSM);
/// other requests get Command Reject "not understood"; responses and rejects are
/// ignored, as we never ask anything. SMP: a Pairing or Security Request gets Pairing
/// Failed "pairing not supported": the proof needs no bonding. On a peripheral
/// connection opened while enrolment accepts pairing, SMP goes up whole instead, to
/// that connection's pairing responder (docs/pairing.md).
public struct L2CAPFixedChannels: Sendable {
    /// What the channels need to know of the connection a frame came on.
    public struct Link: Hashable, Sendable {
        /// We are the peripheral: the central connected to our advertising.
        public var isPeripheral: Bool
        /// SMP goes up (`.securityManager`) instead of being refused here.
        public var pairingDelegated: Bool

        public init(isPeripheral: Bool, pairingDelegated: Bool) {
            self.isPeripheral = isPeripheral
            self.pairingDelegated = pairingDelegated && isPeripheral
        }

        /// A connection we made (persistent connect, proofs).
        public static let central = Link(isPeripheral: false, pairingDelegated: false)
    }

    public enum Action: Hashable, Sendable {
        /// An ATT PDU for the connection's bearer.
        case attribute(handle: UInt16, pdu: [UInt8])
        /// An SMP PDU for the connection's pairing responder (delegated links only).
        case securityManager(handle: UInt16, pdu: [UInt8])
        /// An L2CAP PDU to send back (already framed: basic header included).
        case send(handle: UInt16, pdu: [UInt8])
        /// We accepted these parameters; the caller may apply them (LE Connection Update).
        case connectionParametersAccepted(handle: UInt16, ConnectionParameterRequest)
    }

    public struct Counters: Hashable, Sendable {
        public var signallingRequestsAnswered = 0
        public var signallingRejected = 0
        public var signallingIgnored = 0
        public var malformedSignalling = 0
        public var pairingRefused = 0
        public var securityManagerIgnored = 0
        public var unknownChannelDropped = 0
        public init() {}
    }

    /// The LE signalling MTU we offer: the minimum, as we take no dynamic channels.
    public static let signallingMTU: UInt16 = 23

    public private(set) var counters = Counters()

    public init() {}

    public mutating func receive(_ frame: L2CAPBasicFrame, on link: Link = .central) -> [Action] {
        switch frame.channel {
        case .attribute:
            return [.attribute(handle: frame.connectionHandle, pdu: frame.payload)]
        case .leSignalling:
            return signalling(frame, asPeripheral: link.isPeripheral)
        case .securityManager where link.pairingDelegated:
            return [.securityManager(handle: frame.connectionHandle, pdu: frame.payload)]
        case .securityManager:
            return securityManager(frame)
        default:
            counters.unknownChannelDropped += 1
            return []
        }
    }

    // MARK: LE signalling

    private mutating func signalling(_ frame: L2CAPBasicFrame, asPeripheral: Bool) -> [Action] {
        let handle = frame.connectionHandle
        var reader = HCIByteReader(frame.payload, context: .aboveHCI)
        guard let rawCode = try? reader.u8(), let identifier = try? reader.u8(), let length = try? reader.u16() else {
            counters.malformedSignalling += 1
            return []
        }
        let code = L2CAPSignallingCode(rawValue: rawCode)
        if code.isResponse {
            counters.signallingIgnored += 1
            return []
        }
        // Identifier 0 is never valid on a request: no answer could be matched to it.
        guard identifier != 0 else {
            counters.malformedSignalling += 1
            return []
        }
        if frame.payload.count > Int(Self.signallingMTU) {
            counters.signallingRejected += 1
            var mtu = [UInt8]()
            mtu.appendLE(Self.signallingMTU)
            return [reject(handle, identifier, .signallingMTUExceeded, data: mtu)]
        }
        guard let data = try? reader.slice(Int(length)), reader.isAtEnd else {
            counters.malformedSignalling += 1
            counters.signallingRejected += 1
            return [reject(handle, identifier, .commandNotUnderstood)]
        }
        switch code {
        case .connectionParameterUpdateRequest where asPeripheral:
            // Only a peripheral asks its central for parameters (Core Vol 3 Part A §4.20).
            counters.signallingRejected += 1
            return [reject(handle, identifier, .commandNotUnderstood)]
        case .connectionParameterUpdateRequest:
            var fields = HCIByteReader(data, context: .aboveHCI)
            guard data.count == 8, let intervalMin = try? fields.u16(), let intervalMax = try? fields.u16(),
                  let latency = try? fields.u16(), let timeout = try? fields.u16() else {
                counters.malformedSignalling += 1
                counters.signallingRejected += 1
                return [reject(handle, identifier, .commandNotUnderstood)]
            }
            let request = ConnectionParameterRequest(intervalMin: intervalMin, intervalMax: intervalMax,
                                                     peripheralLatency: latency, supervisionTimeout: timeout)
            counters.signallingRequestsAnswered += 1
            var result = [UInt8]()
            result.appendLE(UInt16(request.isValid ? 0x0000 : 0x0001))
            let answer = command(handle, .connectionParameterUpdateResponse, identifier, result)
            return request.isValid ? [answer, .connectionParametersAccepted(handle: handle, request)] : [answer]
        case .leCreditBasedConnectionRequest:
            // Destination CID, MTU, MPS, initial credits, result "SPSM not supported".
            counters.signallingRequestsAnswered += 1
            return [command(handle, .leCreditBasedConnectionResponse, identifier, [0, 0, 0, 0, 0, 0, 0, 0, 0x02, 0x00])]
        case .disconnectionRequest where data.count == 4:
            // We have no dynamic channels: the CIDs named are invalid (local, then remote).
            counters.signallingRejected += 1
            return [reject(handle, identifier, .invalidCIDInRequest, data: [data[data.startIndex], data[data.startIndex + 1],
                                                                            data[data.startIndex + 2], data[data.startIndex + 3]])]
        default:
            counters.signallingRejected += 1
            return [reject(handle, identifier, .commandNotUnderstood)]
        }
    }

    private func reject(_ handle: UInt16, _ identifier: UInt8, _ reason: L2CAPRejectReason, data: [UInt8] = []) -> Action {
        var body = [UInt8]()
        body.appendLE(reason.rawValue)
        body.append(contentsOf: data)
        return command(handle, .commandReject, identifier, body)
    }

    private func command(_ handle: UInt16, _ code: L2CAPSignallingCode, _ identifier: UInt8, _ data: [UInt8]) -> Action {
        var payload: [UInt8] = [code.rawValue, identifier]
        payload.appendLE(UInt16(truncatingIfNeeded: data.count))
        payload.append(contentsOf: data)
        return .send(handle: handle, pdu: L2CAPBasicFrame(connectionHandle: handle, channel: .leSignalling, payload: payload).bytes)
    }

    // MARK: Security manager

    /// SMP codes this host reacts to (Core Vol 3 Part H §3.3).
    public struct SecurityManagerCode: RawRepresentable, Hashable, Sendable {
        public var rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        public static let pairingRequest = SecurityManagerCode(rawValue: 0x01)
        public static let pairingFailed = SecurityManagerCode(rawValue: 0x05)
        public static let securityRequest = SecurityManagerCode(rawValue: 0x0B)
    }

    /// Pairing Failed reason "Pairing Not Supported".
    public static let pairingNotSupported: UInt8 = 0x05

    private mutating func securityManager(_ frame: L2CAPBasicFrame) -> [Action] {
        switch frame.payload.first.map(SecurityManagerCode.init(rawValue:)) {
        case .pairingRequest?, .securityRequest?:
            counters.pairingRefused += 1
            let payload = [SecurityManagerCode.pairingFailed.rawValue, Self.pairingNotSupported]
            let pdu = L2CAPBasicFrame(connectionHandle: frame.connectionHandle, channel: .securityManager, payload: payload).bytes
            return [.send(handle: frame.connectionHandle, pdu: pdu)]
        default:
            // No pairing is ever in progress, so nothing else needs an answer.
            counters.securityManagerIgnored += 1
            return []
        }
    }
}
