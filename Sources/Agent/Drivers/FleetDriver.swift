#if canImport(Glibc)
import Glibc
#endif
import Config
import EventLoop
import Fleet
import Forwarder
import Journal

/// The fleet's endpoints (see docs/fleet.md): heartbeats to the server, `/metrics` and
/// the textfile, the status socket. It owns their servers, timers and failure logging;
/// what they say comes from the agent's snapshot, built only when one of them asks.
final class FleetDriver: AgentDriver {
    static let textfileInterval: Duration = .seconds(15)
    /// The first heartbeat goes out this soon after start (or sooner with a shorter interval).
    static let firstHeartbeatDelay: Duration = .seconds(2)
    /// Clients of `/metrics` and of the status socket at once; more are closed at once.
    static let maxLocalClients = 8
    /// Requests for `/metrics` within this long of the last body get it again, so a client
    /// that asks in a loop costs one snapshot a second, not one each.
    static let metricsBodyLifetime: Duration = .seconds(1)

    /// What the endpoints read from the rest of the door.
    struct Sources {
        var snapshot: () -> FleetSnapshot
        var statusReport: () -> StatusReport
        /// Called before a heartbeat is sent: events first, whatever delivery is due starts
        /// before the heartbeat does.
        var beforeHeartbeat: () -> Void
        /// The status socket's claim on a request that is not a status request (enrolment).
        var takeOver: ([UInt8], PeerCredentials?) -> LocalServer.TakeOver?
        /// Who may connect to the status socket at all (`StatusSocketAccess`).
        var admits: (PeerCredentials?) -> Bool
    }

    private let loop: EventLoop
    var log: LogSink
    private let counters: FleetObserver
    private let sources: Sources
    private let appVersion: String

    private var heartbeat: HeartbeatSender?
    private var heartbeatTimer: EventLoop.TimerHandle?
    /// The interval the heartbeat timer runs at.
    private var heartbeatInterval: Duration?
    /// Whether the last heartbeat failed: failures and recoveries are logged once each.
    private var heartbeatFailing: Bool?
    private var metricsServer: LocalServer?
    private var metricsBody: (at: Instant, text: String)?
    private var textfileTimer: EventLoop.TimerHandle?
    private var textfileFailing = false
    private var statusServer: LocalServer?

    init(loop: EventLoop, log: LogSink, counters: FleetObserver, appVersion: String, sources: Sources) {
        self.loop = loop
        self.log = log
        self.counters = counters
        self.appVersion = appVersion
        self.sources = sources
    }

    /// The persons count the heartbeat shows without a server roster, then the endpoints.
    func start(_ configuration: GatewayConfiguration) {
        counters.roster = .file(persons: configuration.persons.count)
        startStatusSocket()
        startMetrics(configuration.metrics)
        startHeartbeat(configuration, first: true)
    }

    func stop() {
        stopHeartbeat()
        stopMetrics()
        statusServer?.close()
        statusServer = nil
    }

    /// SIGHUP: the persons count, new heartbeat settings, a new metrics address or textfile.
    func reload(_ fresh: GatewayConfiguration, previous: GatewayConfiguration) {
        counters.roster = .file(persons: fresh.persons.count)
        if fresh.metrics != previous.metrics {
            stopMetrics()
            startMetrics(fresh.metrics)
        }
        // Same interval (a roster switch changes persons only): new settings, same schedule,
        // so the first heartbeat still goes out within 5 s of start.
        if let sender = heartbeat, let server = fresh.server, let interval = server.heartbeatInterval, interval == heartbeatInterval,
           (try? sender.reload(ForwarderConfiguration(server: server, gateway: fresh.gateway, appVersion: appVersion))) != nil {
            return
        }
        stopHeartbeat()
        startHeartbeat(fresh, first: false)
    }

    // MARK: Heartbeat

    private func startHeartbeat(_ configuration: GatewayConfiguration, first: Bool) {
        guard let server = configuration.server, let interval = server.heartbeatInterval else { return }
        let settings = ForwarderConfiguration(server: server, gateway: configuration.gateway, appVersion: appVersion)
        let sender: HeartbeatSender
        do {
            sender = try HeartbeatSender(loop: loop, configuration: settings) { [unowned self] outcome in
                self.heartbeatFinished(outcome)
            }
        } catch {
            log.log(.error, "cannot send heartbeats", ["error": "\(error)"])
            return
        }
        heartbeat = sender
        heartbeatInterval = interval
        scheduleHeartbeat(after: first ? min(interval, Self.firstHeartbeatDelay) : interval)
    }

    private func stopHeartbeat() {
        heartbeat?.stop()
        heartbeat = nil
        if let heartbeatTimer { loop.cancel(heartbeatTimer) }
        heartbeatTimer = nil
    }

    private func scheduleHeartbeat(after delay: Duration) {
        heartbeatTimer = loop.schedule(after: delay) { [unowned self] in
            self.heartbeatTimer = nil
            guard let sender = self.heartbeat, let interval = self.heartbeatInterval else { return }
            self.sources.beforeHeartbeat()
            sender.send(body: HeartbeatBody.render(self.sources.snapshot()))
            self.scheduleHeartbeat(after: interval)
        }
    }

    private func heartbeatFinished(_ outcome: HeartbeatSender.Outcome) {
        switch outcome {
        case .sent:
            counters.counters.heartbeatsSent &+= 1
            if heartbeatFailing != false {
                log.log(heartbeatFailing == nil ? .info : .notice, "heartbeat delivered")
            }
            heartbeatFailing = false
        case let .failed(message):
            heartbeatFailed(message)
        case .skipped:
            heartbeatFailed("the previous heartbeat is still in flight")
        }
    }

    private func heartbeatFailed(_ message: String) {
        counters.counters.heartbeatsFailed &+= 1
        if heartbeatFailing != true {
            log.log(.warning, "heartbeat failing", ["error": message])
        }
        heartbeatFailing = true
    }

    // MARK: Metrics

    private func startMetrics(_ metrics: GatewayConfiguration.Metrics?) {
        guard let metrics else { return }
        if let listen = metrics.listen {
            do {
                metricsServer = try LocalServer(
                    loop: loop, address: .tcp(host: listen.host, port: listen.port), limits: MetricsRequest.limits,
                    maxConnections: Self.maxLocalClients,
                    answer: { [unowned self] head in self.answerMetrics(head) },
                    refusal: { _ in MetricsRequest.tooLarge }
                )
                log.log(.info, "serving metrics", ["listen": listen.description])
            } catch {
                log.log(.error, "cannot serve metrics", ["listen": listen.description, "error": error.description])
            }
        }
        if let path = metrics.textfile { writeTextfile(path) }
    }

    private func stopMetrics() {
        metricsServer?.close()
        metricsServer = nil
        if let textfileTimer { loop.cancel(textfileTimer) }
        textfileTimer = nil
    }

    private func answerMetrics(_ head: [UInt8]) -> [UInt8] {
        switch MetricsRequest.judge(head: head) {
        case .metrics:
            let now = loop.now
            let text: String
            if let cached = metricsBody, now - cached.at < Self.metricsBodyLifetime {
                text = cached.text
            } else {
                text = MetricsExposition.render(sources.snapshot())
                metricsBody = (now, text)
            }
            return MetricsRequest.response(status: 200, reason: "OK", contentType: MetricsExposition.contentType, body: text)
        case let .error(status, reason):
            return MetricsRequest.errorResponse(status: status, reason: reason)
        }
    }

    private func writeTextfile(_ path: String) {
        do {
            try TextfileWriter.write(MetricsExposition.render(sources.snapshot()), to: path)
            if textfileFailing { log.log(.notice, "metrics textfile written again", ["path": path]) }
            textfileFailing = false
        } catch {
            if !textfileFailing { log.log(.error, "cannot write the metrics textfile", ["error": error.description]) }
            textfileFailing = true
        }
        textfileTimer = loop.schedule(after: Self.textfileInterval) { [unowned self] in
            self.textfileTimer = nil
            self.writeTextfile(path)
        }
    }

    // MARK: Status socket

    private func startStatusSocket() {
        let path = StatusSocketPath.resolve()
        var info = stat()
        guard stat(StatusSocketPath.directory(of: path), &info) == 0 else {
            log.log(.info, "no status socket: its directory does not exist", ["path": path])
            return
        }
        do {
            let server = try LocalServer(
                loop: loop, address: .unix(path: path), limits: StatusRequest.limits, maxConnections: Self.maxLocalClients,
                answer: { [unowned self] head in
                    guard let format = StatusRequest.judge(head: head) else { return StatusRequest.refusal }
                    let report = self.sources.statusReport()
                    return Array((format == .json ? report.json() : report.text()).utf8)
                },
                refusal: { _ in StatusRequest.refusal }
            )
            server.takeOver = sources.takeOver
            server.admits = sources.admits
            statusServer = server
            log.log(.info, "status socket", ["path": path])
        } catch {
            log.log(.warning, "no status socket", ["path": path, "error": error.description])
        }
    }
}
