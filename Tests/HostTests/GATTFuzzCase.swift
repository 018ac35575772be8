import EventLoop
import HCI
import SplitMix
@testable import Host

/// One case of the structural GATT fuzzer: a `LEDataPath` (ACL flow control and
/// reassembly, L2CAP fixed channels, ATT bearer, GATT client, write-then-read exchange)
/// runs the proof's exchange against a `HostilePeer` on a virtual clock, then against a
/// genuine peer on a new connection.
///
/// Driven like the agent drives it: every ACL packet we send reaches the peer and comes
/// back as credits now and then, a `.disconnect` is followed a few inputs later by
/// Disconnection Complete (the peer talking on meanwhile), the timer fires at
/// `nextDeadline` whenever the peer's packets take longer to come, and the agent
/// disconnects once the exchange is over.
///
/// A case fails when an exchange does not end (no result within `inputLimit` inputs or
/// within the exchange timeout of virtual time, a wait with no deadline, a timer that does
/// not move on), ends twice, leaves a dead bearer connected, lets buffers grow past their
/// bounds, sends past the MTU or the controller's packet length, loses credits, or when the
/// genuine peer after a hostile one does not get its exact answer. A trap is a crash of
/// the test process: the seed printed before the run replays it.
struct GATTFuzzCase {
    struct Finding: Error, CustomStringConvertible {
        var seed: UInt64
        var message: String
        var description: String { "seed 0x" + String(seed, radix: 16) + ": " + message }
    }

    typealias ExchangeResult = Result<GATTWriteReadExchange.Completion, GATTWriteReadExchange.Failure>

    /// How the hostile connection went, for the run's summary.
    struct Summary {
        /// The outcome's kind (see `name`).
        var outcome: String
        /// Inputs from Connection Complete to Disconnection Complete.
        var inputs: Int
        /// Virtual time from the exchange's start to its result.
        var duration: Duration
    }

    /// Inputs (peer packets, credits, timer ticks) one connection may take: far above what
    /// the product's own bounds allow, so reaching it means an exchange that never ends.
    static let inputLimit = 5_000

    let seed: UInt64
    private var random: SplitMix64
    private var path = LEDataPath()
    private var now = Instant.zero
    private var peer: HostilePeer
    private var connection = ConnectionLog()

    /// What happened on the connection being driven.
    private struct ConnectionLog {
        var outbox: [HostilePeer.Delivery] = []
        var nextDelivery = 0
        var inFlight = 0
        var result: ExchangeResult?
        var finishedAt: Instant?
        var dataPathAskedToDisconnect = false
        var disconnectCountdown: Int?
        var closed = false
        var inputs = 0
        var duration = Duration.zero
    }

    init(seed: UInt64) {
        self.seed = seed
        random = SplitMix64(seed: seed)
        peer = HostilePeer(handle: 0, seed: 0)
    }

    private func finding(_ message: String) -> Finding { Finding(seed: seed, message: message) }

    /// Runs the case; returns how the hostile connection went.
    mutating func run() throws(Finding) -> Summary {
        let packetLength = [27, 27, 64, 251][Int.random(in: 0 ..< 4, using: &random)]
        let buffer = ACLBufferInfo(packetLength: packetLength, packetCount: Int.random(in: 1 ... 8, using: &random), isShared: false)
        _ = path.hostStateChanged(.scanning(ControllerInfo(leBuffer: buffer)))

        let hostileHandle = UInt16.random(in: 0 ... ACLDataHeader.maxConnectionHandle, using: &random)
        peer = HostilePeer(handle: hostileHandle, seed: random.next())
        let hostile = try exchange(cached: Bool.random(using: &random))
        let summary = Summary(outcome: Self.name(hostile), inputs: connection.inputs, duration: connection.duration)

        // A genuine peer next, on the same handle or another: nothing of the hostile one may linger.
        let genuineHandle = Bool.random(using: &random) ? hostileHandle : UInt16.random(in: 0 ... ACLDataHeader.maxConnectionHandle, using: &random)
        peer = HostilePeer(handle: genuineHandle, seed: random.next(), temper: .genuine)
        let cached = Bool.random(using: &random)
        guard case .success(let completion) = try exchange(cached: cached) else {
            throw finding("genuine peer after a hostile one failed: \(String(describing: connection.result))")
        }
        let server = peer.server
        let expectedHandles = GATTWriteReadExchange.Handles(write: server.characteristics[0].value, read: server.characteristics[1].value)
        guard completion.value == Array((1 ... 17).reversed()), completion.handles == expectedHandles,
              completion.attRequests == (cached ? 2 : 5) else {
            throw finding("genuine peer after a hostile one: wrong completion \(completion)")
        }
        return summary
    }

    /// One connection from Connection Complete to Disconnection Complete, with one exchange.
    private mutating func exchange(cached: Bool) throws(Finding) -> ExchangeResult {
        let handle = peer.handle
        connection = ConnectionLog()
        path.connectionOpened(handle)
        guard path.isOpen(handle) else { throw finding("connection 0x\(String(handle, radix: 16)) refused") }
        let started = now
        let server = peer.server
        let request = GATTWriteReadExchange.Request(
            service: TestUUIDs.service, writeCharacteristic: TestUUIDs.challenge, readCharacteristic: TestUUIDs.response,
            value: Array(1 ... 17),
            cachedHandles: cached ? .init(write: server.characteristics[0].value, read: server.characteristics[1].value) : nil)
        try perform(path.startExchange(request, on: handle, now: now))

        while !connection.closed {
            connection.inputs += 1
            guard connection.inputs <= Self.inputLimit else {
                throw finding("no end after \(Self.limitDescription) inputs (result \(String(describing: connection.result)))")
            }
            try checkBounds(handle)
            try step(handle)
        }

        guard let result = connection.result, let finishedAt = connection.finishedAt else {
            throw finding("connection closed without the exchange ending")
        }
        connection.duration = finishedAt - started
        guard connection.duration <= path.configuration.exchangeTimeout else {
            throw finding("exchange ended after \(finishedAt - started), beyond the exchange timeout: \(result)")
        }
        if case .failure(.gatt(let error)) = result, error.closesBearer, error != .linkClosed, !connection.dataPathAskedToDisconnect {
            throw finding("bearer dead (\(error)) but no disconnect asked for")
        }
        guard path.openHandles.isEmpty, path.reassembler.pendingBytes == 0, path.flow.availableCredits == path.flow.totalCredits else {
            throw finding("state left after disconnection: open \(path.openHandles), \(path.reassembler.pendingBytes) bytes pending, "
                + "\(path.flow.availableCredits) of \(path.flow.totalCredits) credits")
        }
        return result
    }

    private static let limitDescription = String(inputLimit)

    /// One input: credits, Disconnection Complete, a packet from the peer, or time passing.
    private mutating func step(_ handle: UInt16) throws(Finding) {
        if connection.inFlight > 0, Int.random(in: 0 ..< 10, using: &random) < 6 {
            try completePackets(Int.random(in: 1 ... connection.inFlight, using: &random), on: handle)
            return
        }
        if connection.result != nil || connection.dataPathAskedToDisconnect {
            // The agent disconnects once the exchange is over; the controller confirms a little later.
            let countdown = connection.disconnectCountdown ?? Int.random(in: 0 ... 3, using: &random)
            connection.disconnectCountdown = countdown - 1
            if countdown == 0 {
                connection.inFlight = 0
                try perform(path.handle(.disconnectionComplete(.init(connectionHandle: handle, reason: .remoteUserTerminated)), now: now))
                return
            }
        }
        if connection.nextDelivery < connection.outbox.count {
            let delivery = connection.outbox[connection.nextDelivery]
            connection.nextDelivery += 1
            try advance(to: now + delivery.delay)
            try perform(path.receiveACL(delivery.packet, now: now))
            return
        }
        let remark = peer.remark()
        if !remark.isEmpty {
            connection.outbox.append(contentsOf: remark)
            return
        }
        // Silence: the controller hands back what it still holds (it does so within a
        // connection event or two), then time runs on to whatever the data path waits for.
        if connection.inFlight > 0 {
            try completePackets(connection.inFlight, on: handle)
            return
        }
        guard let deadline = path.nextDeadline else {
            guard connection.result != nil else { throw finding("the exchange waits with no deadline") }
            return
        }
        try advance(to: deadline)
    }

    private mutating func completePackets(_ count: Int, on handle: UInt16) throws(Finding) {
        connection.inFlight -= count
        try perform(path.handle(.numberOfCompletedPackets([.init(connectionHandle: handle, count: UInt16(count))]), now: now))
    }

    /// Lets virtual time run to `target`, firing the timer at every deadline passed.
    private mutating func advance(to target: Instant) throws(Finding) {
        var ticks = 0
        while let deadline = path.nextDeadline, deadline <= target {
            ticks += 1
            guard ticks <= 100 else { throw finding("timer at \(deadline) fires without moving on") }
            now = max(now, deadline)
            try perform(path.timerFired(now: now))
        }
        now = max(now, target)
    }

    private mutating func perform(_ actions: [LEDataPath.Action]) throws(Finding) {
        for action in actions {
            switch action {
            case .sendACL(let packet):
                guard packet.type == .acl, let (header, data) = try? ACLDataHeader.decode(packet.payload),
                      header.connectionHandle == peer.handle else {
                    throw finding("sent a packet not for the connection: \(packet)")
                }
                guard data.count <= path.flow.packetLength else {
                    throw finding("sent \(data.count) bytes in one ACL packet; the controller takes \(path.flow.packetLength)")
                }
                connection.inFlight += 1
                connection.outbox.append(contentsOf: peer.receive(packet))
            case .disconnect(let handle, _):
                guard handle == peer.handle else { throw finding("disconnect of a handle not ours: \(handle)") }
                connection.dataPathAskedToDisconnect = true
            case .exchangeFinished(let handle, let result):
                guard handle == peer.handle, connection.result == nil else {
                    throw finding("second result on 0x\(String(handle, radix: 16)): \(result) after \(String(describing: connection.result))")
                }
                connection.result = result
                connection.finishedAt = now
            case .connectionParametersAccepted(_, let request):
                guard request.isValid else { throw finding("accepted invalid connection parameters \(request)") }
            case .connectionClosed(let handle, _):
                guard handle == peer.handle else { throw finding("closed a handle not ours: \(handle)") }
                connection.closed = true
            case .rejectLongTermKeyRequest(let handle):
                guard handle == peer.handle else { throw finding("LTK answer for a handle not ours: \(handle)") }
            case .peripheralConnected, .attributeRequest, .securityManager, .longTermKeyRequested, .encryptionChanged:
                throw finding("a central connection produced a peripheral action: \(action)")
            }
        }
    }

    /// Memory stays bounded whatever the peer does: one PDU in reassembly, a bounded send
    /// queue, and every credit accounted for; our requests fit the MTU and stay few.
    private func checkBounds(_ handle: UInt16) throws(Finding) {
        let configuration = path.configuration
        guard path.reassembler.pendingBytes <= L2CAPBasicFrame.headerSize + configuration.maxPDULength else {
            throw finding("reassembly holds \(path.reassembler.pendingBytes) bytes")
        }
        guard path.flow.queuedFragments(on: handle) <= configuration.maxQueuedFragments else {
            throw finding("\(path.flow.queuedFragments(on: handle)) fragments queued")
        }
        guard path.flow.availableCredits + path.flow.outstandingTotal == path.flow.totalCredits else {
            throw finding("credits lost: \(path.flow.availableCredits) + \(path.flow.outstandingTotal) of \(path.flow.totalCredits)")
        }
        guard peer.largestRequest <= configuration.gatt.bearer.mtu else {
            throw finding("sent an ATT PDU of \(peer.largestRequest) bytes")
        }
        // Find the service, discover within the limit, write, read.
        guard peer.requestsSeen <= configuration.gatt.maxDiscoveryRequests + 3 else {
            throw finding("\(peer.requestsSeen) requests in one exchange")
        }
    }

    /// The outcome's kind, without the peer's bytes: what the summary counts.
    static func name(_ result: ExchangeResult) -> String {
        switch result {
        case .success(let completion): completion.usedCache ? "success (cached)" : "success"
        case .failure(.serviceMissing): "service missing"
        case .failure(.characteristicMissing): "characteristic missing"
        case .failure(.gatt(.attError)): "ATT error response"
        case .failure(.gatt(.protocolViolation(let violation))):
            switch violation {
            case .wrongOpcode: "violation: wrong opcode"
            case .mismatchedErrorResponse: "violation: mismatched error response"
            case .oversized: "violation: oversized"
            case .malformed: "violation: malformed"
            case .outOfOrder: "violation: out of order"
            case .endlessResponses: "violation: endless discovery"
            }
        case .failure(.gatt(let error)): "\(error)"
        }
    }
}
