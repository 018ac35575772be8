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
            seconds: seconds
        )
        switch session.run() {
        case .failed(let message):
            printError("calibrate: \(message)")
            throw GatewayExitCode.runtimeFailure
        case .notHeard:
            printError("calibrate: \(tag) was not heard in \(seconds) s: is it on, in range and configured with the identity it sends?")
            throw GatewayExitCode.runtimeFailure
        case .measured(let report):
            writeStandardOutput(report.render(tag: tag))
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

    init(transport: TransportSpec, tag: ConfiguredTag, scan: ScanSettings, seconds: Double) {
        spec = transport
        self.seconds = seconds
        self.scan = scan
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
