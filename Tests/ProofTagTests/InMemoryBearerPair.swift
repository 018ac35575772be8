import EventLoop
import Host
import ProofTag

/// The door's GATT client and a `ProofTag` joined by an in-memory ATT bearer on a virtual
/// clock: each PDU arrives `latency` after it was sent, in the order sent; when nothing
/// is in flight, time jumps to the next deadline.
struct InMemoryBearerPair {
    var client: GATTClient
    var tag: ProofTag
    var security = ATTLinkSecurity.unencrypted
    var now = Instant.zero
    var latency = Duration.milliseconds(20)
    /// Every PDU the tag sent.
    private(set) var tagSent: [[UInt8]] = []
    private(set) var tagActions: [ProofTag.Action] = []

    private enum Flight {
        case toTag([UInt8])
        case toClient([UInt8])
    }

    private var inFlight: [(at: Instant, flight: Flight)] = []
    private var exchange: GATTWriteReadExchange?
    private var result: Result<GATTWriteReadExchange.Completion, GATTWriteReadExchange.Failure>?

    init(tag: ProofTag, client: GATTClient = GATTClient()) {
        self.tag = tag
        self.client = client
    }

    /// Runs the door's write-then-read exchange to its end.
    mutating func run(_ request: GATTWriteReadExchange.Request) -> Result<GATTWriteReadExchange.Completion, GATTWriteReadExchange.Failure>? {
        var exchange = GATTWriteReadExchange(request: request)
        let step = exchange.start(now: now)
        self.exchange = exchange
        result = nil
        apply(step)
        var turns = 0
        while result == nil, turns < 10_000 {
            turns += 1
            if !inFlight.isEmpty {
                let next = inFlight.removeFirst()
                now = max(now, next.at)
                switch next.flight {
                case .toTag(let pdu): fromTag(tag.receive(pdu, security: security, now: now))
                case .toClient(let pdu): fromClient(client.receive(pdu, now: now))
                }
            } else if let deadline = [client.nextDeadline, tag.nextDeadline].compactMap({ $0 }).min() {
                now = max(now, deadline)
                fromClient(client.timerFired(now: now))
                fromTag(tag.timerFired(now: now))
            } else {
                break
            }
        }
        return result
    }

    private mutating func apply(_ step: GATTWriteReadExchange.Step) {
        switch step {
        case .run(let procedure): fromClient(client.start(procedure, now: now))
        case .finished(let outcome): result = outcome
        }
    }

    private mutating func fromClient(_ actions: [GATTClient.Action]) {
        for action in actions {
            switch action {
            case .send(let pdu):
                inFlight.append((now + latency, .toTag(pdu)))
            case .completed(let outcome, let requests):
                guard var exchange, result == nil else { continue }
                let step = exchange.advance(outcome, requests: requests, now: now)
                self.exchange = exchange
                apply(step)
            case .disconnect:
                tag.linkClosed()
            }
        }
    }

    private mutating func fromTag(_ actions: [ProofTag.Action]) {
        for action in actions {
            tagActions.append(action)
            if case .server(.send(let pdu)) = action {
                tagSent.append(pdu)
                inFlight.append((now + latency, .toClient(pdu)))
            }
        }
    }
}
