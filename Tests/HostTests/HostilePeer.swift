import HCI
import SplitMix
@testable import Host

/// A GATT server that may be hostile, drawn from a seed, for the structural fuzzer.
///
/// It answers our ATT requests through a `FakeGATTServer` whose database may itself be odd
/// (services reaching 0xFFFF, characteristics at the last handles), then may spoil each
/// answer the ways a broken or malicious tag could: truncated, padded past the MTU, wrong
/// opcode, duplicated, never sent, Error Responses naming odd requests, handles and codes,
/// discovery results overlapping, decreasing, zero, out of range, with UUIDs neither 2 nor
/// 16 bytes or lengths that do not divide the data, discovery that never ends. Between
/// answers it talks on its own: notifications, indications, MTU requests with tiny and
/// huge MTUs, requests of its own, responses to nothing, signalling and SMP traffic,
/// frames on unknown channels. Every L2CAP frame it sends may then be mangled on the way:
/// wrong L2CAP length or channel, ACL fragments of any size that never complete, overflow,
/// are interrupted, carry the wrong ACL length, boundary flags or handle.
struct HostilePeer {
    /// How often (out of 1000) an answer is spoiled, a frame mangled, a remark made.
    struct Temper {
        var spoilAnswer: Int
        var mangleFrame: Int
        var remark: Int
        /// Out of 100 packets, how many come after a pause of seconds.
        var pauses: Int

        static let genuine = Temper(spoilAnswer: 0, mangleFrame: 0, remark: 0, pauses: 0)
        /// From gentle to rabid, so some cases get deep into the exchange and others never do.
        static let levels = [Temper(spoilAnswer: 40, mangleFrame: 20, remark: 50, pauses: 2),
                             Temper(spoilAnswer: 200, mangleFrame: 80, remark: 150, pauses: 2),
                             Temper(spoilAnswer: 500, mangleFrame: 200, remark: 300, pauses: 5),
                             Temper(spoilAnswer: 900, mangleFrame: 500, remark: 600, pauses: 10)]
    }

    /// A packet for our host and the virtual time the peer's controller takes to deliver it.
    struct Delivery {
        var packet: HCIPacket
        var delay: Duration
    }

    let handle: UInt16
    let temper: Temper
    var random: SplitMix64
    var server = FakeGATTServer()
    /// Joins what we send, as the peer's controller would.
    var reassembler = ACLReassembler(maxPDULength: 1024)
    /// Remarks left: the peer's own traffic is finite, so every case ends.
    var remarksLeft: Int
    /// The largest ATT PDU we sent (must never exceed our MTU).
    var largestRequest = 0
    var requestsSeen = 0
    /// Answers every characteristic discovery with more characteristics, never the last.
    let endless: Bool

    /// A peer of the given temper, or of one drawn from the seed.
    init(handle: UInt16, seed: UInt64, temper: Temper? = nil) {
        self.handle = handle
        random = SplitMix64(seed: seed)
        self.temper = temper ?? Temper.levels[Int.random(in: 0 ..< Temper.levels.count, using: &random)]
        remarksLeft = Int.random(in: 0 ... 40, using: &random)
        endless = self.temper.spoilAnswer > 0 && Int.random(in: 0 ..< 20, using: &random) == 0
        oddDatabase()
        if endless { server.service = GATTHandleRange(start: 0x0001, end: 0xFFFF) }
    }

    private mutating func chance(_ perMille: Int) -> Bool { Int.random(in: 0 ..< 1000, using: &random) < perMille }
    private mutating func pick<T>(_ choices: [T]) -> T { choices[Int.random(in: 0 ..< choices.count, using: &random)] }
    private mutating func u16() -> UInt16 { UInt16.random(in: 0 ... .max, using: &random) }
    private mutating func bytes(_ count: Int) -> [UInt8] { (0 ..< count).map { _ in UInt8.random(in: 0 ... 255, using: &random) } }

    /// Legal but unusual databases: the client must take them as they are. Each: the
    /// service's range, then the two characteristics' declaration handles (values follow).
    private static let oddDatabases: [(service: GATTHandleRange, declarations: [UInt16])] = [
        (GATTHandleRange(start: 0x0001, end: 0xFFFF), [0x0002, 0xFFFE]),
        (GATTHandleRange(start: 0xFFF0, end: 0xFFFF), [0xFFF1, 0xFFFE]),
    ]

    private mutating func oddDatabase() {
        let choice = Int.random(in: 0 ..< 4, using: &random)
        guard choice < Self.oddDatabases.count else { return }
        let database = Self.oddDatabases[choice]
        server.service = database.service
        for (index, declaration) in database.declarations.enumerated() {
            server.characteristics[index].declaration = declaration
            server.characteristics[index].value = declaration + 1
        }
    }

    // MARK: What we send

    /// One ACL packet from our host: what the peer sends back, if anything.
    mutating func receive(_ packet: HCIPacket) -> [Delivery] {
        guard let (header, data) = try? ACLDataHeader.decode(packet.payload),
              let frame = try? reassembler.receive(header, data: data) else { return [] }
        guard frame.channel == .attribute, let opcode = frame.payload.first else { return [] }
        largestRequest = max(largestRequest, frame.payload.count)
        // Our confirmations and our refusals of its requests need no answer.
        guard opcode % 2 == 0, opcode != 0x1E else { return [] }
        requestsSeen += 1
        if endless, opcode == 0x08, frame.payload.count >= 3 { return frames(endlessDiscovery(frame.payload), channel: .attribute) }
        let genuine = server.answer(frame.payload)
        let answers = chance(temper.spoilAnswer) ? spoil(genuine, request: frame.payload) : genuine
        var deliveries = answers.flatMap { frames($0, channel: .attribute) }
        if chance(temper.spoilAnswer / 4) {
            // Answered only long after the request timed out (or just before).
            let late = Duration.milliseconds(Int64.random(in: 4_000 ... 31_000, using: &random))
            if !deliveries.isEmpty { deliveries[0].delay = deliveries[0].delay + late }
        }
        return deliveries
    }

    /// Traffic the peer starts on its own; empty once it has said all it will say.
    mutating func remark() -> [Delivery] {
        guard remarksLeft > 0, chance(temper.remark) else { return [] }
        remarksLeft -= 1
        switch Int.random(in: 0 ..< 10, using: &random) {
        case 0 ... 5: return frames(unsolicitedATT(), channel: .attribute)
        case 6, 7: return frames(signalling(), channel: .leSignalling)
        case 8: return frames(pick([[0x01] + bytes(6), [0x0B, 0x01], [0x0B], [0x05, 0x05], bytes(Int.random(in: 0 ... 30, using: &random))]),
                              channel: .securityManager)
        default: return frames(bytes(Int.random(in: 0 ... 40, using: &random)),
                               channel: L2CAPChannelID(rawValue: pick([0x0000, 0x0001, 0x0003, 0x0040, 0x0041, 0xFFFF])))
        }
    }

    // MARK: ATT

    private mutating func spoil(_ genuine: [[UInt8]], request: [UInt8]) -> [[UInt8]] {
        let answer = genuine.first ?? [request[0] &+ 1]
        switch Int.random(in: 0 ..< 13, using: &random) {
        case 0: return []
        case 1: return [Array(answer.prefix(Int.random(in: 0 ..< answer.count, using: &random)))]
        case 2: return [answer + bytes(Int.random(in: 1 ... 40, using: &random))]
        case 3:
            var flipped = answer
            for _ in 0 ... Int.random(in: 0 ... 2, using: &random) {
                flipped[Int.random(in: 0 ..< flipped.count, using: &random)] = UInt8.random(in: 0 ... 255, using: &random)
            }
            return [flipped]
        case 4:
            var renamed = answer
            renamed[0] = pick([0x01, 0x03, 0x05, 0x07, 0x09, 0x0B, 0x0D, 0x0F, 0x11, 0x13, 0x17, 0x19, 0x21, UInt8.random(in: 0 ... 255, using: &random)])
            return [renamed]
        case 5: return [answer, answer]
        case 6: return [errorResponse(request)]
        case 7: return [unsolicitedATT(), answer]
        case 8: return [readByTypeResponse(request)]
        case 9: return [findByTypeValueResponse()]
        case 10: return [[0x0B] + bytes(Int.random(in: 0 ... 30, using: &random))]
        case 11: return [[0x0D] + bytes(Int.random(in: 0 ... 22, using: &random)), answer]
        default: return [mtuRequest(), answer]
        }
    }

    private mutating func handle(near request: [UInt8]) -> UInt16 {
        let asked = request.count >= 3 ? UInt16(request[1]) | UInt16(request[2]) << 8 : 0
        return pick([0, 1, 0xFFFF, 0xFFFE, asked, asked &- 1, asked &+ 1, u16()])
    }

    private mutating func errorResponse(_ request: [UInt8]) -> [UInt8] {
        let opcode = pick([request[0], request[0], request[0] ^ 0x02, 0x00, 0x01, 0x52, UInt8.random(in: 0 ... 255, using: &random)])
        let code = pick([0x00, 0x01, 0x06, 0x0A, 0x0A, 0x0E, 0x11, 0x80, 0xFD, 0xFF, UInt8.random(in: 0 ... 255, using: &random)])
        let target = handle(near: request)
        let pdu: [UInt8] = [0x01, opcode, UInt8(truncatingIfNeeded: target), UInt8(truncatingIfNeeded: target >> 8), code]
        return chance(800) ? pdu : Array(pdu.prefix(Int.random(in: 1 ... 4, using: &random))) + bytes(Int.random(in: 0 ... 3, using: &random))
    }

    /// Read By Type answers built to break the rules on purpose: every length byte, entries
    /// overlapping, decreasing, zero, past the range, value handles before their declarations.
    private mutating func readByTypeResponse(_ request: [UInt8]) -> [UInt8] {
        let start = request.count >= 3 ? UInt16(request[1]) | UInt16(request[2]) << 8 : 1
        let length: UInt8 = pick([0, 1, 2, 5, 6, 7, 7, 7, 8, 18, 20, 21, 21, 22, 255])
        var pdu: [UInt8] = [0x09, length]
        var previous = start
        for _ in 0 ..< Int.random(in: 0 ... 3, using: &random) {
            let declaration = pick([previous, previous &+ 1, previous &- 1, start, 0, 0xFFFF, 0xFFFE, u16()])
            let value = pick([declaration &+ 1, declaration, declaration &- 1, 0, 0xFFFF, u16()])
            pdu.append(contentsOf: le(declaration) + [UInt8.random(in: 0 ... 255, using: &random)] + le(value))
            let uuidSize = chance(700) ? max(0, Int(length) - 5) : pick([0, 1, 2, 3, 4, 15, 16, 17])
            let uuid = pick([TestUUIDs.challenge, TestUUIDs.response, TestUUIDs.other, GATTUUID(uuid16: 0x2A00)]).attBytes
            pdu.append(contentsOf: uuidSize == uuid.count ? uuid : bytes(uuidSize))
            previous = declaration
        }
        if chance(200) { pdu.append(contentsOf: bytes(Int.random(in: 1 ... 6, using: &random))) }
        return pdu
    }

    /// Find By Type Value answers: zero, reversed, 0xFFFF and ragged handle ranges.
    private mutating func findByTypeValueResponse() -> [UInt8] {
        var pdu: [UInt8] = [0x07]
        for _ in 0 ..< Int.random(in: 0 ... 3, using: &random) {
            let (start, end) = pick([(0, 0), (0, 0x10), (0x10, 0), (0x20, 0x10), (1, 0xFFFF), (0xFFFF, 0xFFFF), (0xFFFF, 1), (u16(), u16())])
            pdu.append(contentsOf: le(UInt16(start)) + le(UInt16(end)))
        }
        if chance(300) { pdu.append(contentsOf: bytes(Int.random(in: 1 ... 3, using: &random))) }
        return pdu
    }

    /// Valid entries of characteristics we do not want, from where we asked on: keeps a
    /// client that trusts the peer asking forever.
    private mutating func endlessDiscovery(_ request: [UInt8]) -> [UInt8] {
        let start = UInt16(request[1]) | UInt16(request[2]) << 8
        var pdu: [UInt8] = [0x09, 7]
        for index in 0 ..< UInt16(Int.random(in: 1 ... 3, using: &random)) {
            let declaration = start &+ 2 &* index
            pdu.append(contentsOf: le(declaration) + [0x02] + le(declaration &+ 1) + [0x00, 0x2A])
        }
        return pdu
    }

    private mutating func mtuRequest() -> [UInt8] {
        let mtu = pick([0, 1, 22, 23, 24, 185, 247, 517, 0xFFFF, u16()])
        return chance(900) ? [0x02] + le(UInt16(mtu)) : [0x02] + bytes(Int.random(in: 0 ... 4, using: &random))
    }

    private mutating func unsolicitedATT() -> [UInt8] {
        let size = pick([0, 1, 2, 3, 10, 20, 22, 23, 30, 100, 600])
        switch Int.random(in: 0 ..< 9, using: &random) {
        case 0: return [0x1B] + bytes(size)
        case 1: return [0x23] + bytes(size)
        case 2: return [0x1D] + bytes(size)
        case 3: return [0x1E] + bytes(size % 4)
        case 4: return mtuRequest()
        case 5: return [0x03] + le(UInt16(pick([0, 23, 517, 0xFFFF])))
        case 6: return [pick([0x04, 0x06, 0x08, 0x0A, 0x0C, 0x0E, 0x10, 0x12, 0x16, 0x18, 0x20, 0x52, 0xD2, 0x7E, 0xFE])] + bytes(size)
        case 7: return [pick([0x01, 0x05, 0x07, 0x09, 0x0B, 0x0D, 0x0F, 0x11, 0x13, 0x17, 0x19, 0x21])] + bytes(size)
        default: return bytes(size)
        }
    }

    // MARK: L2CAP signalling

    private mutating func signalling() -> [UInt8] {
        let identifier: UInt8 = pick([0, 1, 0x7F, 0xFF])
        switch Int.random(in: 0 ..< 5, using: &random) {
        case 0:
            let values: [UInt16] = [pick([6, 0, 3200, 0xFFFF]), pick([6, 40, 3201]), pick([0, 499, 500]), pick([10, 0, 3200, 100])]
            return [0x12, identifier] + le(8) + values.flatMap { le($0) }
        case 1: return [0x14, identifier] + le(10) + bytes(10)
        case 2: return [0x06, identifier] + le(4) + bytes(4)
        case 3: return [UInt8.random(in: 0 ... 0x1A, using: &random), identifier] + le(u16() % 40) + bytes(Int.random(in: 0 ... 40, using: &random))
        default: return [pick([0x01, 0x07, 0x13, 0x15] as [UInt8])] + bytes(Int.random(in: 0 ... 10, using: &random))
        }
    }

    // MARK: Framing

    /// An L2CAP frame as ACL packets, possibly mangled on the way.
    private mutating func frames(_ payload: [UInt8], channel: L2CAPChannelID) -> [Delivery] {
        var l2cap = L2CAPBasicFrame(connectionHandle: handle, channel: channel, payload: payload).bytes
        let mangle = chance(temper.mangleFrame) ? Int.random(in: 0 ..< 10, using: &random) : -1
        switch mangle {
        case 0: l2cap[0] = l2cap[0] &+ UInt8.random(in: 1 ... 3, using: &random)
        case 1: l2cap[0] = l2cap[0] &- UInt8.random(in: 1 ... 3, using: &random)
        case 2: (l2cap[0], l2cap[1]) = (0xFF, pick([0x01, 0x02, 0x03, 0xFF]))
        case 3: (l2cap[2], l2cap[3]) = (UInt8.random(in: 0 ... 255, using: &random), UInt8.random(in: 0 ... 255, using: &random))
        case 4: l2cap = Array(l2cap.prefix(Int.random(in: 1 ..< l2cap.count, using: &random)))
        default: break
        }
        let fragmentLength = pick([27, 27, 251, Int.random(in: 1 ... 64, using: &random)])
        var packets = stride(from: 0, to: l2cap.count, by: fragmentLength).map { offset in
            ACLDataHeader.packet(handle: handle, boundary: offset == 0 ? .firstFlushable : .continuing,
                                 data: l2cap[offset ..< min(offset + fragmentLength, l2cap.count)])
        }
        switch mangle {
        case 5: packets.append(ACLDataHeader.packet(handle: handle, boundary: .continuing, data: bytes(Int.random(in: 1 ... 600, using: &random))[...]))
        case 6: packets[0] = ACLDataHeader.packet(handle: handle, boundary: pick([.continuing, .firstNonFlushable, .completeFlushable]),
                                                  data: packets[0].payload[4...])
        case 7:
            // A new start in the middle: the partial PDU must be dropped, not glued on.
            packets.insert(ACLDataHeader.packet(handle: handle, boundary: .firstFlushable, data: l2cap.prefix(3)),
                           at: Int.random(in: 0 ... packets.count, using: &random))
        case 8:
            let index = Int.random(in: 0 ..< packets.count, using: &random)
            var payload = packets[index].payload
            switch Int.random(in: 0 ..< 4, using: &random) {
            case 0: payload = Array(payload.prefix(Int.random(in: 0 ... 3, using: &random)))
            case 1: payload[2] = payload[2] &+ 1
            case 2: payload[1] = payload[1] ^ UInt8(1 << Int.random(in: 0 ... 7, using: &random))
            default: payload.append(contentsOf: bytes(Int.random(in: 1 ... 4, using: &random)))
            }
            packets[index] = HCIPacket(type: pick([.acl, .acl, .event, .sco, .iso]), payload: payload)
        case 9:
            let other = pick([handle ^ 0x001, 0x0EFF, 0x0FFF, handle])
            packets.append(ACLDataHeader.packet(handle: other, boundary: .firstFlushable, data: l2cap[...]))
        default: break
        }
        return packets.map { Delivery(packet: $0, delay: delay()) }
    }

    /// Mostly the pace of a connection, now and then a long pause.
    private mutating func delay() -> Duration {
        // A genuine peer keeps the pace of a healthy link.
        guard temper.pauses > 0 else { return .microseconds(Int64.random(in: 0 ... 20_000, using: &random)) }
        let roll = Int.random(in: 0 ..< 100, using: &random)
        if roll < temper.pauses { return .milliseconds(Int64.random(in: 2_000 ... 12_000, using: &random)) }
        if roll < 10 { return .milliseconds(Int64.random(in: 60 ... 1_000, using: &random)) }
        return .microseconds(Int64.random(in: 0 ... 60_000, using: &random))
    }

    private func le(_ value: UInt16) -> [UInt8] { [UInt8(truncatingIfNeeded: value), UInt8(truncatingIfNeeded: value >> 8)] }
}
