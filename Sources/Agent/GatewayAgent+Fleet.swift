#if canImport(Glibc)
import AttendanceEvents
import Glibc
#endif
import Config
import EventLoop
import Fleet
import Forwarder
import Journal

/// The fleet's view of the agent (see docs/fleet.md): heartbeats to the server, `/metrics`
/// and the textfile, the status socket. Snapshots are built only when one of them asks.
extension GatewayAgent {
    static let textfileInterval: Duration = .seconds(15)
    /// The first heartbeat goes out this soon after start (or sooner with a shorter interval).
    static let firstHeartbeatDelay: Duration = .seconds(2)
    /// Clients of `/metrics` and of the status socket at once; more are closed at once.
    static let maxLocalClients = 8

    func startFleet() {
        fleet.roster = .file(persons: configuration.persons.count)
        startStatusSocket()
        startMetrics(configuration.metrics)
        startHeartbeat(configuration, first: true)
    }

    func stopFleet() {
        stopRoster()
        fleet.heartbeat?.stop()
        fleet.heartbeat = nil
        if let timer = fleet.heartbeatTimer { loop.cancel(timer) }
        fleet.heartbeatTimer = nil
        stopMetrics()
        fleet.statusServer?.close()
        fleet.statusServer = nil
    }

    /// SIGHUP: new heartbeat settings, a new metrics address or textfile, the persons count.
    func reloadFleet(_ fresh: GatewayConfiguration, previous: GatewayConfiguration) {
        fleet.roster = .file(persons: fresh.persons.count)
        if fresh.metrics != previous.metrics {
            stopMetrics()
            startMetrics(fresh.metrics)
        }
        // Same interval (a roster switch changes persons only): new settings, same schedule,
        // so the first heartbeat still goes out within 5 s of start.
        if let sender = fleet.heartbeat, let server = fresh.server, let interval = server.heartbeatInterval,
           interval == fleet.heartbeatInterval,
           (try? sender.reload(ForwarderConfiguration(server: server, gateway: fresh.gateway, appVersion: options.appVersion))) != nil {
            return
        }
        fleet.heartbeat?.stop()
        fleet.heartbeat = nil
        if let timer = fleet.heartbeatTimer { loop.cancel(timer) }
        fleet.heartbeatTimer = nil
        startHeartbeat(fresh, first: false)
    }

    // MARK: Snapshots

    func fleetSnapshot() -> FleetSnapshot {
        let now = loop.now
        let wall = loop.wallMilliseconds
        var outbox = OutboxSnapshot()
        if let store, let status = try? store.status(nowMillis: wall) {
            outbox = OutboxSnapshot(pending: status.pending, dead: status.dead, rejected: status.rejected,
                                    oldestPendingSeconds: Double(status.oldestPendingAgeMillis ?? 0) / 1000)
        }
        let uptime = now - fleet.startedAt
        return FleetSnapshot(
            gatewayId: configuration.gateway.id, siteId: configuration.gateway.site, doorId: configuration.gateway.door,
            version: options.appVersion, startedAtMillis: fleet.startedAtMillis, nowMillis: wall,
            uptimeSeconds: Int(uptime.components.seconds), clockSynced: clockSynchronisedNow(),
            mode: fleet.mode, controller: fleet.controller(link?.host.state, info: link?.host.controllerInfo),
            scanning: link?.host.isControllerAnswering ?? false, present: presence.openVisits,
            reportsPerSecond: fleet.measureRate(at: now), outbox: outbox, roster: rosterStatus(),
            lastEventAtMillis: fleet.lastEventAtMillis, counters: fleet.counters,
            process: ProcessMetrics.read(startTimeSeconds: Double(fleet.startedAtMillis) / 1000)
        )
    }

    func statusReport() -> StatusReport {
        let snapshot = fleetSnapshot()
        let visits = core.openVisits(at: loop.now).map { visit in
            OpenVisitSnapshot(personId: visit.personId, state: "\(visit.state)", sinceMillis: visit.visitStartWallMilliseconds,
                              rssi: visit.filteredRSSI, tag: visit.tagId, proven: visit.proven)
        }
        return StatusReport(snapshot: snapshot, visits: visits, recentEvents: fleet.recentEvents)
    }

    // MARK: Heartbeat

    func startHeartbeat(_ configuration: GatewayConfiguration, first: Bool) {
        guard let server = configuration.server, let interval = server.heartbeatInterval else { return }
        let settings = ForwarderConfiguration(server: server, gateway: configuration.gateway, appVersion: options.appVersion)
        do {
            fleet.heartbeat = try HeartbeatSender(loop: loop, configuration: settings) { [unowned self] outcome in
                self.heartbeatFinished(outcome)
            }
        } catch {
            log.log(.error, "cannot send heartbeats", ["error": "\(error)"])
            return
        }
        fleet.heartbeatInterval = interval
        scheduleHeartbeat(after: first ? min(interval, Self.firstHeartbeatDelay) : interval)
    }

    private func scheduleHeartbeat(after delay: Duration) {
        fleet.heartbeatTimer = loop.schedule(after: delay) { [unowned self] in
            self.fleet.heartbeatTimer = nil
            guard let sender = self.fleet.heartbeat, let interval = self.configuration.server?.heartbeatInterval else { return }
            // Events first: whatever delivery is due starts before the heartbeat does.
            self.forwarder?.kick()
            sender.send(body: HeartbeatBody.render(self.fleetSnapshot()))
            self.scheduleHeartbeat(after: interval)
        }
    }

    private func heartbeatFinished(_ outcome: HeartbeatSender.Outcome) {
        switch outcome {
        case .sent:
            fleet.counters.heartbeatsSent &+= 1
            if fleet.heartbeatFailing != false {
                log.log(fleet.heartbeatFailing == nil ? .info : .notice, "heartbeat delivered")
            }
            fleet.heartbeatFailing = false
        case let .failed(message):
            heartbeatFailed(message)
        case .skipped:
            heartbeatFailed("the previous heartbeat is still in flight")
        }
    }

    private func heartbeatFailed(_ message: String) {
        fleet.counters.heartbeatsFailed &+= 1
        if fleet.heartbeatFailing != true {
            log.log(.warning, "heartbeat failing", ["error": message])
        }
        fleet.heartbeatFailing = true
    }

    // MARK: Metrics

    func startMetrics(_ metrics: GatewayConfiguration.Metrics?) {
        guard let metrics else { return }
        if let listen = metrics.listen {
            do {
                fleet.metricsServer = try LocalServer(
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

    func stopMetrics() {
        fleet.metricsServer?.close()
        fleet.metricsServer = nil
        if let timer = fleet.textfileTimer { loop.cancel(timer) }
        fleet.textfileTimer = nil
    }

    private func answerMetrics(_ head: [UInt8]) -> [UInt8] {
        switch MetricsRequest.judge(head: head) {
        case .metrics:
            let now = loop.now
            let text: String
            if let cached = fleet.metricsBody, now - cached.at < FleetObserver.metricsBodyLifetime {
                text = cached.text
            } else {
                text = MetricsExposition.render(fleetSnapshot())
                fleet.metricsBody = (now, text)
            }
            return MetricsRequest.response(status: 200, reason: "OK", contentType: MetricsExposition.contentType, body: text)
        case let .error(status, reason):
            return MetricsRequest.errorResponse(status: status, reason: reason)
        }
    }

    private func writeTextfile(_ path: String) {
        do {
            try TextfileWriter.write(MetricsExposition.render(fleetSnapshot()), to: path)
            if fleet.textfileFailing { log.log(.notice, "metrics textfile written again", ["path": path]) }
            fleet.textfileFailing = false
        } catch {
            if !fleet.textfileFailing { log.log(.error, "cannot write the metrics textfile", ["error": error.description]) }
            fleet.textfileFailing = true
        }
        fleet.textfileTimer = loop.schedule(after: Self.textfileInterval) { [unowned self] in
            self.fleet.textfileTimer = nil
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
            fleet.statusServer = try LocalServer(
                loop: loop, address: .unix(path: path), limits: StatusRequest.limits, maxConnections: Self.maxLocalClients,
                answer: { [unowned self] head in
                    guard let format = StatusRequest.judge(head: head) else { return StatusRequest.refusal }
                    let report = self.statusReport()
                    return Array((format == .json ? report.json() : report.text()).utf8)
                },
                refusal: { _ in StatusRequest.refusal }
            )
            fleet.statusServer?.takeOver = { [unowned self] head in self.enrolmentTakeOver(head) }
            log.log(.info, "status socket", ["path": path])
        } catch {
            log.log(.warning, "no status socket", ["path": path, "error": error.description])
        }
    }
}

extension GatewayAgent {
    /// The server's switch for the whole door (see docs/fleet.md): what it means is the
    /// core's decision (`DoorCore.setMode`); the fleet, the LEDs and STATUS show it.
    func setMode(_ mode: DoorMode) {
        guard mode != fleet.mode else { return }
        fleet.mode = mode
        perform(core.setMode(mode, at: loop.now))
        showMode()
    }
}
