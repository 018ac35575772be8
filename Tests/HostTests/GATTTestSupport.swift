import EventLoop
import XCTest
@testable import Host

/// The proof service's UUIDs (as docs/proof-protocol.md writes them), used as plain GATT test data.
enum TestUUIDs {
    static let service = uuid("327c0001652e44d5b1549f067567c974")
    static let challenge = uuid("327c0002652e44d5b1549f067567c974")
    static let response = uuid("327c0003652e44d5b1549f067567c974")
    static let other = uuid("0000aaaa00001000800000805f9b34fc")

    static func uuid(_ text: String) -> GATTUUID {
        var bytes = [UInt8]()
        var index = text.startIndex
        while index < text.endIndex {
            let next = text.index(index, offsetBy: 2)
            bytes.append(UInt8(text[index ..< next], radix: 16) ?? 0)
            index = next
        }
        return GATTUUID(bytes: bytes)!
    }
}

/// A well-behaved GATT server holding one service, answering one request at a time.
final class FakeGATTServer {
    struct Characteristic {
        var declaration: UInt16
        var properties: UInt8
        var value: UInt16
        var uuid: GATTUUID
    }

    var serviceUUID = TestUUIDs.service
    var service = GATTHandleRange(start: 0x0010, end: 0x0016)
    var characteristics = [
        Characteristic(declaration: 0x0011, properties: 0x08, value: 0x0012, uuid: TestUUIDs.challenge),
        Characteristic(declaration: 0x0013, properties: 0x02, value: 0x0014, uuid: TestUUIDs.response),
    ]
    var values: [UInt16: [UInt8]] = [:]
    /// What the response characteristic returns, computed from the last write.
    var respond: ([UInt8]) -> [UInt8] = { $0.reversed() }
    var requests: [[UInt8]] = []

    func answer(_ pdu: [UInt8]) -> [[UInt8]] {
        guard let opcode = pdu.first else { return [] }
        // Confirmations and our error answers to peer requests need no answer.
        guard opcode % 2 == 0, opcode != 0x1E else { return [] }
        requests.append(pdu)
        func u16(_ at: Int) -> UInt16 { UInt16(pdu[at]) | UInt16(pdu[at + 1]) << 8 }
        func le(_ value: UInt16) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8)] }
        func error(_ code: UInt8, _ handle: UInt16) -> [[UInt8]] { [[0x01, opcode] + le(handle) + [code]] }
        switch opcode {
        case 0x06:
            let value = Array(pdu[7...])
            guard value == serviceUUID.attBytes, service.start >= u16(1) else { return error(0x0A, u16(1)) }
            return [[0x07] + le(service.start) + le(service.end)]
        case 0x08:
            let start = u16(1), end = u16(3)
            guard let found = characteristics.first(where: { $0.declaration >= start && $0.declaration <= end }) else {
                return error(0x0A, start)
            }
            let uuid = found.uuid.attBytes
            return [[0x09, UInt8(5 + uuid.count)] + le(found.declaration) + [found.properties] + le(found.value) + uuid]
        case 0x12:
            let handle = u16(1)
            guard characteristics.contains(where: { $0.value == handle }) else { return error(0x01, handle) }
            values[handle] = Array(pdu[3...])
            if handle == characteristics.first(where: { $0.uuid == TestUUIDs.challenge })?.value,
               let response = characteristics.first(where: { $0.uuid == TestUUIDs.response })?.value {
                values[response] = respond(Array(pdu[3...]))
            }
            return [[0x13]]
        case 0x0A:
            let handle = u16(1)
            guard let value = values[handle] else { return error(0x01, handle) }
            return [[0x0B] + value]
        default:
            return error(0x06, 0)
        }
    }
}

/// Runs a `GATTWriteReadExchange` on a `GATTClient` against a peer in simulated time.
struct ExchangeHarness {
    var client: GATTClient
    var exchange: GATTWriteReadExchange
    var now = Instant.zero
    /// Simulated time per round trip.
    var latency: Duration = .milliseconds(30)
    var sent: [[UInt8]] = []
    var disconnects: [GATTError] = []
    var result: Result<GATTWriteReadExchange.Completion, GATTWriteReadExchange.Failure>?
    /// The peer: answers to each PDU we send. nil → silence (timeouts).
    var peer: ([UInt8]) -> [[UInt8]]?

    init(request: GATTWriteReadExchange.Request, configuration: GATTClient.Configuration = .init(),
         peer: @escaping ([UInt8]) -> [[UInt8]]?) {
        client = GATTClient(configuration: configuration)
        exchange = GATTWriteReadExchange(request: request)
        self.peer = peer
    }

    static func request(cached: GATTWriteReadExchange.Handles? = nil, value: [UInt8] = Array(1 ... 17)) -> GATTWriteReadExchange.Request {
        .init(service: TestUUIDs.service, writeCharacteristic: TestUUIDs.challenge, readCharacteristic: TestUUIDs.response,
              value: value, cachedHandles: cached)
    }

    mutating func run(maxSteps: Int = 10_000) {
        apply(exchange.start(now: now))
        var steps = 0
        while result == nil, steps < maxSteps {
            steps += 1
            // Nothing came back: let time pass to the bearer's deadline.
            guard let deadline = client.nextDeadline else { break }
            now = deadline
            process(client.timerFired(now: now))
        }
    }

    /// Feeds a PDU from the peer by hand (unsolicited traffic).
    mutating func inject(_ pdu: [UInt8]) { process(client.receive(pdu, now: now)) }

    private mutating func apply(_ step: GATTWriteReadExchange.Step) {
        switch step {
        case .run(let procedure): process(client.start(procedure, now: now))
        case .finished(let outcome): result = outcome
        }
    }

    mutating func process(_ actions: [GATTClient.Action]) {
        var queue = actions
        while !queue.isEmpty {
            let action = queue.removeFirst()
            switch action {
            case .send(let pdu):
                sent.append(pdu)
                guard let answers = peer(pdu) else { continue }
                now = now + latency
                for answer in answers { queue.append(contentsOf: client.receive(answer, now: now)) }
            case .completed(let outcome, let requests):
                if result == nil { apply(exchange.advance(outcome, requests: requests, now: now)) }
            case .disconnect(let error):
                disconnects.append(error)
            }
        }
    }

    var completion: GATTWriteReadExchange.Completion? { try? result?.get() }
    var failure: GATTWriteReadExchange.Failure? {
        if case .failure(let failure)? = result { return failure }
        return nil
    }
}
