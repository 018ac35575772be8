#if canImport(Glibc)
import Advertisements
import Glibc
#endif
import Config
import EventLoop
import HCI
import HCITransport
import Host
import HostDrivers
import Journal
import Presentation

/// One run of `beacon-gateway scan`: transport → host → decoding and matching →
/// the advertiser table → the terminal or JSON lines.
final class ScanSession {
    enum Output {
        /// A table redrawn in place every second (stdout is a terminal).
        case liveTable
        /// JSON lines every second and closing lines at the end.
        case json
        /// Only the closing table (stdout is a pipe or a file).
        case finalTable
    }

    struct Options {
        var transport: TransportSpec
        var seconds: Double?
        var output: Output
        var capturePath: String?
        var scan: ScanSettings
        var tags: [ConfiguredTag]
        /// With `[mqtt]` and `[site]` neighbours: the neighbours' sightings are read from
        /// the site bus and shown beside each matched person (docs/cli.md).
        var configuration: GatewayConfiguration?
    }

    enum Outcome {
        case completed
        case failed(String)
    }

    private let options: Options
    private let loop = EventLoop()
    private let log = LogSink()
    // Touched once per report, only on the loop's thread and never re-entrantly: the
    // dynamic exclusivity check of a class property is a large share of the ingest
    // (docs/benchmarks.md, "Why the live path is cheap").
    @exclusivity(unchecked) private var matcher: TagMatcher
    @exclusivity(unchecked) private var table = AdvertiserTable(capacity: ScanSession.tableCapacity)
    private var link: ControllerDriver?
    private var neighbours: NeighbourListener?
    private var lastTick: Instant
    private var everScanned = false
    private var fatal: String?
    private var isReplay: Bool {
        if case .btsnoop = options.transport { return true }
        return false
    }

    /// Advertisers `scan` keeps statistics for: more than a door's radio range holds in
    /// practice, and room for all the advertisers of `scripts/bench-ingest`
    /// (docs/benchmarks.md), whose closing lines must account for every report. Memory
    /// stays bounded (a few hundred bytes per advertiser); past it the least recently
    /// heard one is evicted and counted (`evicted` in the summary).
    static let tableCapacity = 16_384

    init(options: Options) {
        self.options = options
        matcher = TagMatcher(tags: options.tags)
        lastTick = loop.now
    }

    func run() -> Outcome {
        let replay = isReplay
        let controller: ControllerSession
        do {
            controller = try ControllerSession(
                loop: loop, spec: options.transport, capturePath: options.capturePath, scan: options.scan,
                isPermanent: { error in ScanSession.isPermanent(error, replay: replay) }
            )
        } catch {
            return .failed(error.message)
        }
        let link = controller.link
        self.link = link
        // Unretained, and used without a retain per call: an atomic retain and release per
        // report (each stalling on the table's cache misses) cost more than the ingest.
        // Safe because the session owns the link and stops it before `run()` returns.
        let session = Unmanaged.passUnretained(self)
        link.onAdvertisingReport = { report, now in
            session._withUnsafeGuaranteedRef { $0.ingest(report, at: now) }
        }
        link.onStateChanged = { [unowned self] state in self.stateChanged(state) }
        link.onLog = { [unowned self] event in self.log.log(event) }
        link.onFatalError = { [unowned self] error in
            self.fatal = error.message
            self.loop.stop()
        }
        link.onExhausted = { [unowned self] in
            self.log.log(.info, "replay finished" + (self.link?.replayCost.map { ": " + $0 } ?? ""))
            self.loop.stop()
        }

        if !replay, options.output != .finalTable {
            scheduleTick()
        }
        if !replay, let configuration = options.configuration {
            neighbours = NeighbourListener(configuration: configuration, loop: loop, command: "scan")
            neighbours?.start()
        }
        defer { neighbours?.stop() }
        log.log(.info, "scan starting", ["transport": options.transport.description])
        if let failure = controller.run(limit: options.seconds.map { .milliseconds(Int64($0 * 1000)) }, log: log) {
            fatal = fatal ?? failure
        }

        if let fatal { return .failed(fatal) }
        printClosingOutput()
        logSummary(transport: controller.transport)
        if !everScanned {
            let reason = link.lastTransportError.map { ": \($0.message)" } ?? ""
            return .failed("the controller never started scanning on \(options.transport)\(reason)")
        }
        return .completed
    }

    // MARK: Ingest (the hot path)

    private func ingest(_ report: LEAdvertisingReportView, at now: Instant) {
        let keys = AdvertisementKeys(scanning: report.data)
        let match = matcher.match(address: report.address, addressType: report.addressType, keys: keys)
        table.record(
            address: report.address, addressType: report.addressType,
            rssi: report.rssi ?? AdvertiserTable.rssiUnavailable, txPower: report.txPower,
            connectable: report.isConnectable, isScanResponse: report.isScanResponse,
            bytes: report.data, keys: keys, match: match, at: now
        )
    }

    private func stateChanged(_ state: HostState) {
        switch state {
        case .scanning(let info):
            everScanned = true
            log.log(.info, "controller up", [
                "address": info.address.description,
                "commands": info.commandFamily.description,
                "accept_list": "\(info.filterAcceptListSize)",
            ])
        case .recovering(let reason, let attempt):
            log.log(attempt == 1 ? .warning : .info, "controller unavailable", ["reason": reason.description, "attempt": "\(attempt)"])
        case .starting, .initializing:
            break
        }
    }

    // MARK: Output

    private func scheduleTick() {
        _ = loop.schedule(after: .seconds(1)) { [unowned self] in
            self.tick()
            self.scheduleTick()
        }
    }

    private func tick() {
        let now = loop.now
        switch options.output {
        case .json:
            var text = ""
            for snapshot in table.snapshots(now: now) where snapshot.lastHeard > lastTick {
                text += snapshot.jsonLine(final: false, neighbours: neighbourReadings(snapshot))
                text += "\n"
            }
            writeStandardOutput(text)
        case .liveTable:
            let rows = max(terminalRows() - 3, 5)
            let snapshots = table.snapshots(now: now)
            var text = "\u{1B}[H\u{1B}[2J"
            text += "beacon-gateway scan · \(options.transport) · \(link?.host.state.isScanning == true ? "scanning" : "controller unavailable")"
            text += " · \(snapshots.count) advertisers · \(table.reports) reports\n"
            text += AdvertiserSnapshot.textTable(Array(snapshots.prefix(rows)), neighbours: neighbourColumn)
            writeStandardOutput(text)
        case .finalTable:
            break
        }
        lastTick = now
    }

    private func printClosingOutput() {
        // A replay ends at its last recorded report, so rates are per recorded second.
        let snapshots = table.snapshots(now: link?.replayTimeline?.latest ?? loop.now)
        switch options.output {
        case .json:
            // Written in 64 KiB pieces: 16,384 advertisers would otherwise be one ~5 MB
            // string on top of the table at the process's peak.
            let piece = 64 * 1024
            var text = ""
            text.reserveCapacity(piece + 1024)
            for snapshot in snapshots {
                text += snapshot.jsonLine(final: true, neighbours: neighbourReadings(snapshot))
                text += "\n"
                if text.utf8.count >= piece {
                    writeStandardOutput(text)
                    text.removeAll(keepingCapacity: true)
                }
            }
            writeStandardOutput(text)
        case .liveTable, .finalTable:
            writeStandardOutput(AdvertiserSnapshot.textTable(snapshots, neighbours: neighbourColumn))
        }
    }

    private func logSummary(transport: any HCITransport) {
        let counters = link?.host.counters ?? HostCounters()
        let matcherCounters = matcher.counters
        log.log(.info, "scan finished", [
            "advertisers": "\(table.count)",
            "reports": "\(table.reports)",
            "matched": "\(matcherCounters.matched)",
            "malformed_events": "\(counters.malformedEvents)",
            "malformed_ad": "\(matcherCounters.malformed.malformedReports)",
            "framing_errors": "\(transport.framingErrors)",
            "recoveries": "\(counters.recoveries)",
            "evicted": "\(table.evictions)",
        ])
    }

    // MARK: Neighbours

    /// The column, while the site bus is read (and up: else the command goes on without it).
    private var neighbourColumn: ((AdvertiserSnapshot) -> [NeighbourReading]?)? {
        guard let neighbours, neighbours.isUp else { return nil }
        return { [unowned self] snapshot in self.neighbourReadings(snapshot) }
    }

    /// What each neighbour hears now of the snapshot's person; nil without a person or a bus.
    private func neighbourReadings(_ snapshot: AdvertiserSnapshot) -> [NeighbourReading]? {
        guard let neighbours, neighbours.isUp, let person = snapshot.personId else { return nil }
        let wall = loop.wallMilliseconds
        return neighbours.heard.heard(personId: person, wallNow: wall).map {
            NeighbourReading(neighbour: $0.neighbour, rssi: $0.rssi, holds: $0.holds, ageMilliseconds: max(wall - $0.wallMilliseconds, 0))
        }
    }

    // MARK: Helpers

    /// Errors that retrying cannot fix. A missing adapter is one for `scan` (a typo), and so
    /// is an adapter another program holds (scan is interactive: say so at once); the
    /// service keeps retrying both instead, since a dongle or the adapter may come free.
    static func isPermanent(_ error: TransportError, replay: Bool) -> Bool {
        switch error {
        case .bluetoothUnsupported, .noSuchAdapter, .permissionDenied, .rfkillBlocked, .userChannelTaken,
             .unsupportedBaudRate, .serialFlowControlUnsupported, .replayFile, .corruptReplayFile,
             .captureFile, .hostNotFound:
            return true
        default:
            // A replay cannot be reopened: whatever stopped it is final.
            return replay
        }
    }

    static func configuredTags(_ configuration: GatewayConfiguration) -> [ConfiguredTag] {
        configuration.persons.flatMap { person in
            person.tags.map { ConfiguredTag(tagId: $0.id, personId: person.id, identities: $0.identities) }
        }
    }
}

func isTerminal(_ descriptor: Int32) -> Bool { isatty(descriptor) == 1 }

func terminalRows() -> Int {
    var size = winsize()
    guard ioctl(1, UInt(TIOCGWINSZ), &size) == 0, size.ws_row > 0 else { return 24 }
    return Int(size.ws_row)
}
