import EventLoop
import HCI
@testable import Host

/// Drives a `HostController` against a `FakeController` in simulated time: sends
/// are answered at once, timers fire at `nextDeadline`, reopen requests are honoured
/// (and fail while the controller is unreachable).
struct HostHarness {
    var host: HostController
    var controller: FakeController
    let clock = ManualClock()
    /// Whether a (re)opened transport reaches the controller.
    var controllerReachable = true
    private(set) var transportOpen = false
    private(set) var pendingReopen: Instant?
    private(set) var actions: [HostAction] = []
    private(set) var reopenDelays: [Duration] = []
    private(set) var states: [(Instant, HostState)] = []
    private(set) var reports: [LEAdvertisingReport] = []
    private(set) var results: [HostCommandResult] = []
    private(set) var closes = 0

    init(controller: FakeController, configuration: HostConfiguration = HostConfiguration()) {
        self.controller = controller
        host = HostController(configuration: configuration)
    }

    var now: Instant { clock.now }

    mutating func open() {
        transportOpen = true
        feed(.transportOpened)
    }

    mutating func feed(_ input: HostInput) {
        process(host.handle(input, now: now))
    }

    mutating func submit<C: HCICommand>(_ command: C, token: UInt64, recoverOnTimeout: Bool = true) {
        process(host.submit(command, token: token, now: now, recoverOnTimeout: recoverOnTimeout))
    }

    /// Delivers a packet as if the controller sent it.
    mutating func inject(_ packet: HCIPacket) { feed(.packetReceived(packet)) }

    mutating func process(_ first: [HostAction]) {
        var pending = first
        while !pending.isEmpty {
            let action = pending.removeFirst()
            actions.append(action)
            switch action {
            case .send(let packet):
                guard transportOpen else { continue }
                for reply in controller.receive(packet) {
                    pending.append(contentsOf: host.handle(.packetReceived(reply), now: now))
                }
            case .closeTransport:
                transportOpen = false
                closes += 1
            case .reopenTransport(let after):
                transportOpen = false
                reopenDelays.append(after)
                pendingReopen = now + after
            case .stateChanged(let state):
                states.append((now, state))
            case .advertisingReports(let batch):
                reports.append(contentsOf: batch)
            case .commandFinished(let result):
                results.append(result)
            case .event, .aclData, .log:
                break
            }
        }
    }

    /// Runs simulated time forward to `target`, firing every deadline on the way.
    /// Set when a deadline kept firing without moving: a host bug, reported by tests.
    private(set) var stuck = false

    mutating func advance(to target: Instant) {
        var iterations = 0
        while true {
            iterations += 1
            if iterations > 100_000 {
                stuck = true
                break
            }
            let candidates = [host.nextDeadline, pendingReopen].compactMap { $0 }
            guard let next = candidates.min(), next <= target else { break }
            if next > now { clock.advance(to: next) }
            if let reopen = pendingReopen, reopen <= now {
                pendingReopen = nil
                if controllerReachable {
                    open()
                } else {
                    feed(.transportClosed(reason: "connection refused"))
                }
            } else {
                feed(.timerFired)
            }
        }
        if target > now { clock.advance(to: target) }
    }

    mutating func advance(by duration: Duration) { advance(to: now + duration) }

    var sentOpcodes: [Opcode] { controller.received }
}
