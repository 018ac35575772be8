import Advertisements
import ArgumentParser
import Config
import EventLoop
import GatewayCore
import HCI
import Host
import HostDrivers
import Journal

/// `beacon-gateway calibrate TAG`: RSSI statistics of one tag while the installer stands
/// at the door threshold, and the thresholds they suggest (see docs/cli.md).
struct CalibrateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "calibrate",
        abstract: "Measure a tag's RSSI at the door threshold and suggest enter_rssi / exit_rssi.",
        discussion: """
        Stand at the threshold with the tag as people carry it (pocket, lanyard) and keep \
        still while it runs. The agent itself must not be running: the controller is used \
        exclusively.
        """
    )

    @Argument(help: "The tag id, as in [[person.tag]] id.")
    var tag: String

    @Option(name: .long, help: "Configuration file.")
    var config: String = defaultConfigurationPath

    @Option(name: .long, help: "How long to listen.")
    var seconds: Double = 20

    @Option(name: .long, help: "Controller transport, instead of the configuration's.")
    var transport: String?

    func validate() throws {
        guard seconds > 0, seconds <= 3600 else { throw ValidationError("--seconds must be between 0 and 3600, got \(seconds)") }
    }

    func run() throws {
        let configuration = try loadConfiguration(path: config)
        guard let (person, configuredTag) = configuration.tag(id: tag) else {
            let known = configuration.persons.flatMap { $0.tags.map(\.id) }.joined(separator: ", ")
            printError("calibrate: no tag \"\(tag)\" in \(config) (tags: \(known.isEmpty ? "none" : known))")
            throw GatewayExitCode.configurationError
        }
        let spec = try transportSpec(option: transport, otherwise: configuration.bluetooth.transport)
        let session = CalibrationSession(
            transport: spec,
            tag: ConfiguredTag(tagId: configuredTag.id, personId: person.id, identities: configuredTag.identities),
            scan: configuration.bluetooth.scanSettings(),
            seconds: seconds,
            configuration: configuration
        )
        switch session.run() {
        case .failed(let message):
            printError("calibrate: \(message)")
            throw GatewayExitCode.runtimeFailure
        case .notHeard:
            printError("calibrate: \(tag) was not heard in \(seconds) s: is it on, in range and configured with the identity it sends?")
            throw GatewayExitCode.runtimeFailure
        case .measured(let report):
            var text = report.render(tag: tag)
            if let site = configuration.site, site.hasNeighbours, session.readsNeighbours {
                let listed: [String] = if case let .doors(ids) = site.neighbours { ids } else { [] }
                text += report.renderNeighbours(session.neighbourSamples, neighbours: listed, marginDB: site.marginDB,
                                                busReached: session.neighbourBusReached)
            }
            writeStandardOutput(text)
        }
    }
}

/// Listens for one tag for a while and collects its RSSI.
final class CalibrationSession {
    enum Outcome {
        case measured(CalibrationReport)
        case notHeard
        case failed(String)
    }

    private let spec: TransportSpec
    private let seconds: Double
    private let scan: ScanSettings
    private let loop = EventLoop()
    private let log = LogSink()
    private var matcher: TagMatcher
    private var rssi: [Int] = []
    private var times: [Int64] = []
    private var fatal: String?
    private let personId: String
    private let configuration: GatewayConfiguration?
    /// With `[mqtt]` and `[site]` neighbours: their sightings of the tag's person, by
    /// neighbour, while it runs (docs/cli.md).
    private(set) var neighbourSamples: [String: [Int]] = [:]
    private(set) var readsNeighbours = false
    private(set) var neighbourBusReached = false

    init(transport: TransportSpec, tag: ConfiguredTag, scan: ScanSettings, seconds: Double,
         configuration: GatewayConfiguration? = nil) {
        spec = transport
        self.seconds = seconds
        self.scan = scan
        personId = tag.personId
        self.configuration = configuration
        matcher = TagMatcher(tags: [tag])
    }

    func run() -> Outcome {
        let controller: ControllerSession
        do {
            controller = try ControllerSession(loop: loop, spec: spec, scan: scan, isPermanent: { _ in false })
        } catch {
            return .failed(error.message)
        }
        let link = controller.link
        link.onAdvertisingReport = { [unowned self] report, now in
            guard let value = report.rssi,
                  self.matcher.match(address: report.address, addressType: report.addressType,
                                     keys: AdvertisementKeys(scanning: report.data)) != nil
            else { return }
            self.rssi.append(Int(value))
            self.times.append(now.nanoseconds)
        }
        link.onLog = { [unowned self] event in self.log.log(event) }
        link.onExhausted = { [unowned self] in self.loop.stop() }
        var listener: NeighbourListener?
        if case .btsnoop = spec {} else if let configuration {
            listener = NeighbourListener(configuration: configuration, loop: loop, command: "calibrate")
            listener?.onSighting = { [unowned self] person, heard in
                if person == self.personId { self.neighbourSamples[heard.neighbour, default: []].append(heard.rssi) }
            }
            listener?.onState = { [unowned self] up in if up { self.neighbourBusReached = true } }
            readsNeighbours = listener != nil
            listener?.start()
        }
        defer { listener?.stop() }
        log.log(.info, "calibrating: stand still at the door threshold", ["seconds": "\(seconds)", "transport": spec.description])
        fatal = controller.run(limit: .milliseconds(Int64(seconds * 1000)), log: log)
        if let fatal { return .failed(fatal) }
        guard let report = CalibrationReport(rssi: rssi, timesNanoseconds: times) else {
            if let error = link.lastTransportError { return .failed(error.message) }
            return .notHeard
        }
        return .measured(report)
    }
}
