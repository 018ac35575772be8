import EventLoop
import PresenceProof
import HCI
import Host

/// Connections and proofs on one controller (docs/proof-protocol.md,
/// docs/persistent-connect.md), built once for `run` and `prove` alike: the connect
/// scheduler's driver, the data path and the proof runner over it. Which tags to connect to
/// and whether to prove them is the caller's decision; these only report what happened on
/// the air (`connect.onConnected`, `runner.onFinished`, …).
///
/// The owner of the link hands on what the controller reports through the functions
/// below, which write the order the three hear it in (docs/architecture.md, "Who hears
/// what, in which order").
public final class ProofDrivers {
    public let connect: ConnectSchedulerDriver
    public let dataPath: DataPathDriver
    public let runner: ProofRunner

    /// `dataPath`: the controller's data path when it has one already (one per controller:
    /// the ACL credits are the controller's); else one is made. `makeChallenge` defaults to
    /// the operating system's CSPRNG (see `ProofRunner`).
    public init(link: ControllerDriver, configuration: ConnectScheduler.Configuration, activeScanning: Bool,
                dataPath: DataPathDriver? = nil, makeChallenge: (() -> ProofChallenge)? = nil) {
        // The data path before the scheduler, here too: on a link that runs already, each
        // starts from the controller's state as it is built.
        self.dataPath = dataPath ?? DataPathDriver(link: link)
        connect = ConnectSchedulerDriver(link: link, configuration: configuration, activeScanning: activeScanning)
        runner = ProofRunner(dataPath: self.dataPath, makeChallenge: makeChallenge)
    }

    /// Starts a handshake on a connection the scheduler reported (`connect.onConnected`);
    /// the connect time in its timings runs from the last LE Create Connection.
    public func startProof(on handle: UInt16, tagId: String, key: TagKey, cachedHandles: ProofHandles?,
                           at now: Instant) {
        let connectDuration = connect.lastCreateConnectionAt.map { now - $0 }
        runner.start(handle: handle, tag: tagId, key: key, cachedHandles: cachedHandles, connectDuration: connectDuration, now: now)
    }

    // MARK: What the controller reports, in order

    /// A host state change: the data path, then the connect scheduler. On a reset the data
    /// path ends the connections first, so a handshake on one ends as `controller_reset`
    /// (not the tag's failure) before the scheduler reports the link lost; on scanning it
    /// has the controller's buffers before the scheduler connects anything.
    public func hostStateChanged(_ state: HostState) {
        dataPath.hostStateChanged(state, now: dataPath.link.loop.now)
        connect.hostStateChanged(state)
    }

    /// An HCI event: the data path, then the connect scheduler. The data path has a new
    /// connection registered before the scheduler reports it (and a handshake starts on
    /// it), and has ended a closed connection's handshake before the scheduler reports the
    /// link lost.
    public func handle(_ event: HCIEvent, now: Instant) {
        dataPath.handle(event, now: now)
        connect.handle(event, now: now)
    }

    /// ACL data: the data path's alone.
    public func receiveACL(_ packet: HCIPacket, now: Instant) {
        dataPath.receiveACL(packet, now: now)
    }

    /// The data path closed a connection (its `onConnectionClosed`): the runner, whose
    /// handshake on it ends with that reason.
    public func connectionClosed(_ handle: UInt16, reason: LEDataPath.CloseReason) {
        runner.connectionClosed(handle, reason: reason)
    }
}
