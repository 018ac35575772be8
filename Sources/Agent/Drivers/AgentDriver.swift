import Config
import Journal

/// One subsystem of `run` on the agent's loop, as the composition root sees it: started,
/// reloaded, given the log level and stopped through one list (`GatewayAgent.drivers`;
/// docs/architecture.md, "One lifecycle for every driver"). What a driver tells the door
/// goes through the hooks it is built with; this is only what the door tells every driver.
///
/// Every requirement but `close` is written out by each driver, a driver with nothing to
/// do saying why: a silent default is how a hook gets forgotten (a reload that never
/// reaches a driver, a stop that leaves its timer running).
protocol AgentDriver: AnyObject {
    /// Its lines in the journal: the agent sets their level from `[gateway] log_level`,
    /// and again at every reload.
    var log: LogSink { get set }

    /// `run` starts, or the driver was built while the door runs (it is started at once):
    /// `configuration`, the one in force.
    func start(_ configuration: GatewayConfiguration)

    /// A configuration was put in force (SIGHUP or a new server roster), after the door
    /// core took it; `previous`, the one before.
    func reload(_ configuration: GatewayConfiguration, previous: GatewayConfiguration)

    /// The door stops: nothing more is started, sent or scheduled. In reverse start order,
    /// so every driver that may use this one has stopped before it: the store, started
    /// first, stops last and writes what must survive the stop then.
    func stop()

    /// After every driver has stopped: what a stop began is waited for (the controller's
    /// hand-back) and what is still held let go (the store's file). Nothing, by default.
    func close()
}

extension AgentDriver {
    func close() {}
}

/// Where each of the agent's drivers is in its lifecycle, and the one way through it:
/// the list the agent gives, in its order for start, reload and the log level, in
/// reverse for the stop and the close.
final class DriverLifecycle {
    enum Phase: Equatable {
        case built, started, stopped, closed
    }

    private var phases: [ObjectIdentifier: Phase] = [:]

    func phase(of driver: any AgentDriver) -> Phase {
        phases[ObjectIdentifier(driver)] ?? .built
    }

    /// Starts each listed driver not started yet, in the list's order: at `run`, and
    /// whenever a driver is built while the door runs.
    func start(_ drivers: [any AgentDriver], _ configuration: GatewayConfiguration) {
        for driver in drivers where phase(of: driver) == .built {
            phases[ObjectIdentifier(driver)] = .started
            driver.start(configuration)
        }
    }

    func reload(_ drivers: [any AgentDriver], _ configuration: GatewayConfiguration, previous: GatewayConfiguration) {
        for driver in drivers { driver.reload(configuration, previous: previous) }
    }

    func setLogLevel(_ drivers: [any AgentDriver], _ level: Severity) {
        for driver in drivers { driver.log.minimumLevel = level }
    }

    /// Every listed driver, started or not (one built but not started may hold what it
    /// was built with: the controller's transport), in reverse order, once.
    func stop(_ drivers: [any AgentDriver]) {
        for driver in drivers.reversed() where [.built, .started].contains(phase(of: driver)) {
            phases[ObjectIdentifier(driver)] = .stopped
            driver.stop()
        }
    }

    /// After `stop`, in the same order.
    func close(_ drivers: [any AgentDriver]) {
        for driver in drivers.reversed() where phase(of: driver) == .stopped {
            phases[ObjectIdentifier(driver)] = .closed
            driver.close()
        }
    }

    /// A driver the door no longer has (the roster, `[server] roster` switched off):
    /// stopped and closed now, and forgotten.
    func retire(_ driver: any AgentDriver) {
        stop([driver])
        close([driver])
        phases[ObjectIdentifier(driver)] = nil
    }
}
