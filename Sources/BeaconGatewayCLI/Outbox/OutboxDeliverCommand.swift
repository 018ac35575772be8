import Agent
import ArgumentParser
import Config
import EventLoop
import Forwarder
import JSONText
import Journal
import Store

/// `outbox deliver`: only the forwarder, on the event loop, as `run` drives it. A testing
/// and benchmarking aid (and a way to drain a backlog by hand).
struct OutboxDeliverCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "deliver",
        abstract: "Testing aid: deliver the outbox to [server] without scanning.",
        discussion: """
        Runs until interrupted, for --seconds, or with --until-empty until nothing is pending. \
        SIGHUP re-reads the configuration (a new token). Prints one JSON summary line at the end.
        """
    )

    @Option(name: .long, help: "Configuration file ([gateway] and [server]).")
    var config: String = defaultConfigurationPath

    @Option(name: .long, help: "The state directory, instead of the configuration's.")
    var stateDir: String?

    @Flag(name: .long, help: "Stop once no event is pending (dead letters and rejected ones do not count).")
    var untilEmpty = false

    @Option(name: .long, help: "Stop after this many seconds.")
    var seconds: Double?

    @Option(name: .long, help: "Requests in flight at once.")
    var maxInFlight: Int = 8

    @Flag(name: .long, help: "Log every delivery (debug level).")
    var verbose = false

    func validate() throws {
        if let seconds, !(seconds > 0) { throw ValidationError("--seconds must be positive") }
        guard (1 ... 256).contains(maxInFlight) else { throw ValidationError("--max-in-flight must be 1…256") }
    }

    private func loadConfiguration() throws -> GatewayConfiguration {
        do {
            return try GatewayConfiguration.load(path: config)
        } catch {
            printError(error.description)
            throw GatewayExitCode.configurationError
        }
    }

    func run() throws {
        let configuration = try loadConfiguration()
        let log = LogSink(minimumLevel: verbose ? .debug : .info)
        guard let server = configuration.server else {
            log.log(.warning, "no [server] in the configuration: events stay stored", ["config": config])
            throw GatewayExitCode.configurationError
        }
        let path = Store.path(stateDirectory: stateDir ?? configuration.gateway.stateDirectory)
        let store: Store
        do {
            store = try Store(path: path)
        } catch {
            printError("outbox: \(error.description)")
            throw GatewayExitCode.runtimeFailure
        }
        let loop = EventLoop()
        let started = loop.now
        var delivered = 0
        let forwarder: Forwarder
        do {
            forwarder = try Forwarder(
                store: store, loop: loop,
                configuration: ForwarderConfiguration(server: server, gateway: configuration.gateway,
                                                      appVersion: BeaconGateway.version, maxInFlight: maxInFlight)
            ) { event in
                if case .delivered = event { delivered += 1 }
                event.log(to: log)
            }
        } catch {
            printError("outbox: \(error.description)")
            throw GatewayExitCode.configurationError
        }
        try? loop.onSignal(.interrupt) { loop.stop() }
        try? loop.onSignal(.terminate) { loop.stop() }
        try? loop.onSignal(.hangup) {
            do {
                let reloaded = try GatewayConfiguration.load(path: config)
                guard let server = reloaded.server else { return }
                try forwarder.reload(ForwarderConfiguration(server: server, gateway: reloaded.gateway,
                                                            appVersion: BeaconGateway.version, maxInFlight: maxInFlight))
                log.log(.notice, "configuration reloaded")
            } catch {
                log.log(.error, "reload failed; keeping the previous settings", ["error": "\(error)"])
            }
        }
        if let seconds {
            loop.schedule(after: .milliseconds(Int64(seconds * 1_000))) { loop.stop() }
        }
        if untilEmpty {
            func check() {
                loop.schedule(after: .milliseconds(50)) {
                    if forwarder.inFlightCount == 0, (try? store.hasPending()) == false {
                        loop.stop()
                    } else {
                        check()
                    }
                }
            }
            check()
        }
        forwarder.start()
        do {
            try loop.run()
        } catch {
            printError("outbox deliver: \(error)")
            throw GatewayExitCode.runtimeFailure
        }
        forwarder.stop()
        let elapsed = (loop.now - started).secondsDouble
        var writer = JSONWriter()
        writer.beginObject()
        writer.key("delivered"); writer.number(delivered)
        writer.key("seconds"); writer.number(elapsed, fractionDigits: 3)
        if let status = try? forwarder.status() {
            writer.key("pending"); writer.number(status.outbox.pending)
            writer.key("sent"); writer.number(status.outbox.sent)
            writer.key("rejected"); writer.number(status.outbox.rejected)
            writer.key("dead"); writer.number(status.outbox.dead)
            writer.key("lastErrorClass"); writer.string(status.lastErrorClass?.rawValue)
        }
        writer.endObject()
        writeStandardOutput(writer.text + "\n")
    }
}
