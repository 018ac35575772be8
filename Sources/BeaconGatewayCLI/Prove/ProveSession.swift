import Advertisements
import Config
import EventLoop
import GatewayCore
import HCI
import Host
import HostDrivers
import Journal
import PresenceProof

/// The loop behind `beacon-gateway prove`: scan until the tag is heard, connect through
/// the `ConnectSchedulerDriver` (the agent's persistent connect), run the handshake, report.
final class ProveSession {
    struct Target {
        var tagId: String
        var personId: String
        var identities: [TagIdentity]
        var key: TagKey?
        var configuredPeer: ConnectPeer?

        init?(tagId: String, configuration: GatewayConfiguration) {
            guard let (person, tag) = configuration.tag(id: tagId) else { return nil }
            self.tagId = tagId
            personId = person.id
            identities = tag.identities
            key = configuration.proofKey(for: tag)
            configuredPeer = tag.configuredConnectPeer
        }
    }

    enum Outcome {
        case proven
        case notProven
        case failed(String)
    }

    private let configuration: GatewayConfiguration
    private let target: Target
    private let transport: TransportSpec
    private let timeout: Duration
    private let count: Int
    private let tries: Int
    private let json: Bool
    private let loop = EventLoop()
    private var link: ControllerDriver?
    private var proofs: ProofDrivers?
    private var matcher: TagMatcher
    private var book = ProofBook(policy: .init(maxConsecutiveFailures: .max))
    private var scanningSince: Instant?
    private var heardAt: Instant?
    private var wanted = false
    private var proofsDone = 0
    private var provenCount = 0
    private var tryInProof = 0
    private var fatal: String?
    private var timedOut = false

    init(configuration: GatewayConfiguration, target: Target, transport: TransportSpec, timeout: Duration,
         count: Int, tries: Int, json: Bool) {
        self.configuration = configuration
        self.target = target
        self.transport = transport
        self.timeout = timeout
        self.count = count
        self.tries = tries
        self.json = json
        matcher = TagMatcher(tags: [ConfiguredTag(tagId: target.tagId, personId: target.personId, identities: target.identities)])
    }

    func run() -> Outcome {
        let controller: ControllerSession
        do {
            controller = try ControllerSession(
                loop: loop, spec: transport, scan: configuration.bluetooth.scanSettings(),
                isPermanent: { error in ScanSession.isPermanent(error, replay: false) }
            )
        } catch {
            return .failed(error.message)
        }
        let bluetooth = configuration.bluetooth
        let link = controller.link
        self.link = link
        link.onAdvertisingReport = { [unowned self] report, now in self.report(report, at: now) }
        link.onFatalError = { [unowned self] error in
            self.fatal = error.message
            self.loop.stop()
        }
        let proofs = ProofDrivers(
            link: link,
            configuration: bluetooth.connectScheduling(maxConnections: 1),
            activeScanning: bluetooth.scan == .active
        )
        proofs.runner.timeLimit = ProofTimeLimit(bound: configuration.presence.proofResponseLimit)
        // Who hears what, in which order (docs/architecture.md): the proof drivers, then the
        // session's own bookkeeping.
        self.proofs = proofs
        link.onStateChanged = { [unowned self, unowned proofs] state in
            proofs.hostStateChanged(state)
            if case .scanning = state, self.scanningSince == nil { self.scanningSince = self.loop.now }
        }
        link.onEvent = { [unowned proofs] event, now in proofs.handle(event, now: now) }
        link.onACLData = { [unowned proofs] packet, now in proofs.receiveACL(packet, now: now) }
        proofs.dataPath.onConnectionClosed = { [unowned proofs] handle, reason, _ in proofs.connectionClosed(handle, reason: reason) }
        proofs.connect.onConnected = { [unowned self] _, handle, now in self.connected(handle: handle, at: now) }
        proofs.runner.onFinished = { [unowned self] outcome, now in self.finished(outcome, at: now) }

        _ = loop.schedule(after: timeout) { [unowned self] in
            self.timedOut = true
            self.loop.stop()
        }
        if let failure = controller.run(limit: nil, log: LogSink()) {
            fatal = fatal ?? failure
        }
        if let fatal { return .failed(fatal) }
        if timedOut {
            let what = heardAt == nil ? "the tag was not heard" : "no handshake finished"
            printError("prove: timed out after \(timeout): \(what) (\(proofsDone) of \(count) proofs done)")
        }
        if count > 1 { printError("prove: \(provenCount) of \(count) proofs valid") }
        return provenCount == count ? .proven : .notProven
    }

    private func report(_ report: LEAdvertisingReportView, at now: Instant) {
        guard !wanted,
              matcher.match(address: report.address, addressType: report.addressType,
                            keys: AdvertisementKeys(scanning: report.data)) != nil else { return }
        heardAt = now
        wanted = true
        var peer = ConnectPeer(address: report.address, addressType: report.addressType.forAcceptList)
        // Heard through another identity: connect to the configured address anyway.
        if let configured = target.configuredPeer, configured.address != report.address { peer = configured }
        proofs?.connect.want(tagIndex: 0, peer: peer)
    }

    private func connected(handle: UInt16, at now: Instant) {
        guard let key = target.key else { return }
        proofs?.startProof(on: handle, tagId: target.tagId, key: key, cachedHandles: book.cachedHandles(tag: target.tagId), at: now)
    }

    private func finished(_ outcome: ProofOutcome, at now: Instant) {
        tryInProof += 1
        if let handles = outcome.handles, outcome.ok {
            book.recordSuccess(tag: target.tagId, handles: handles, roundTripMilliseconds: outcome.roundTripMilliseconds, now: now)
        } else if let failure = outcome.failure {
            _ = book.recordFailure(tag: target.tagId, reason: failure, now: now)
        }
        let wait: Duration? = (proofsDone == 0 && tryInProof == 1) ? heardAt.flatMap { heard in scanningSince.map { heard - $0 } } : nil
        report(outcome, proof: proofsDone + 1, try: tryInProof, wait: wait)
        if outcome.ok || tryInProof >= tries {
            if outcome.ok { provenCount += 1 }
            proofsDone += 1
            tryInProof = 0
        }
        if proofsDone >= count {
            proofs?.connect.unwant(tagIndex: 0)
            // Let the Disconnect go out before the transport closes.
            _ = loop.schedule(after: .milliseconds(100)) { [unowned self] in self.loop.stop() }
        }
        // Otherwise the tag stays wanted: the scheduler re-arms once the link is down.
    }

    private func report(_ outcome: ProofOutcome, proof: Int, try attempt: Int, wait: Duration?) {
        let t = outcome.timings
        let total = (wait ?? .zero) + (t.connect ?? .zero) + t.discovery + t.write + t.read + t.verify
        if json {
            var object = JSONObjectWriter()
            object.add("tag", outcome.tagId)
            object.add("proof", proof)
            object.add("try", attempt)
            object.add("ok", outcome.ok)
            object.add("failure", outcome.failure?.name)
            object.add("wait_ms", wait.map(Self.ms))
            object.add("connect_ms", t.connect.map(Self.ms))
            object.add("cached", outcome.usedCachedHandles)
            object.add("discovery_ms", Self.ms(t.discovery))
            object.add("write_ms", Self.ms(t.write))
            object.add("read_ms", Self.ms(t.read))
            object.add("verify_ms", Self.ms(t.verify))
            object.add("handshake_ms", outcome.roundTripMilliseconds)
            object.add("total_ms", Self.ms(total))
            object.add("att_round_trips", outcome.attRoundTrips)
            print(object.text)
            return
        }
        if outcome.ok {
            print("\(outcome.tagId): proof valid")
        } else {
            print("\(outcome.tagId): proof FAILED: \(outcome.failure.map { "\($0.name) (\($0))" } ?? "unknown")")
        }
        func line(_ label: String, _ value: Duration?) {
            let text = value.map { Self.format(Self.ms($0)) } ?? "-"
            print("  " + padded(label, 24) + text)
        }
        line("wait for advertising", wait)
        line("connect", t.connect)
        line(outcome.usedCachedHandles ? "discovery (cache hit)" : "discovery", t.discovery)
        line("write", t.write)
        line("read", t.read)
        line("verify", t.verify)
        line("total", total)
        print("  " + padded("ATT round trips", 24) + "\(outcome.attRoundTrips)")
    }

    static func ms(_ duration: Duration) -> Double {
        Double(duration.nanosecondsClamped) / 1_000_000
    }

    static func format(_ milliseconds: Double) -> String {
        let tenths = Int((milliseconds * 10).rounded())
        return "\(tenths / 10).\(tenths % 10) ms"
    }
}

/// A flat JSON object, keys in insertion order (the output is read by scripts; see docs/cli.md).
struct JSONObjectWriter {
    private var parts: [String] = []

    mutating func add(_ key: String, _ value: String?) {
        parts.append(Self.quote(key) + ":" + (value.map(Self.quote) ?? "null"))
    }
    mutating func add(_ key: String, _ value: Int) { parts.append(Self.quote(key) + ":\(value)") }
    mutating func add(_ key: String, _ value: Bool) { parts.append(Self.quote(key) + ":\(value)") }
    mutating func add(_ key: String, _ value: Double?) {
        guard let value, value.isFinite else { return parts.append(Self.quote(key) + ":null") }
        parts.append(Self.quote(key) + ":" + String((value * 1000).rounded() / 1000))
    }

    var text: String { "{" + parts.joined(separator: ",") + "}" }

    static func quote(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case _ where scalar.value < 0x20: out += "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count) + String(scalar.value, radix: 16)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}

/// `text` followed by spaces up to `width` characters (Foundation's `padding` would link
/// all of Foundation and ICU into the static binary).
private func padded(_ text: String, _ width: Int) -> String {
    text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
}

