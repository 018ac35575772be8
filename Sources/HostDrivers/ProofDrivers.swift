import EventLoop
import GatewayCore
import Host

/// Connections and proofs on one controller (docs/proof-protocol.md,
/// docs/persistent-connect.md), built once for `run` and `prove` alike: the connect
/// scheduler's driver, the data path and the proof runner over it. Which tags to connect to
/// and whether to prove them is the caller's decision; these only report what happened on
/// the air (`connect.onConnected`, `runner.onFinished`, …).
public final class ProofDrivers {
    public let connect: ConnectSchedulerDriver
    public let dataPath: DataPathDriver
    public let runner: ProofRunner

    /// `makeChallenge` defaults to the operating system's CSPRNG (see `ProofRunner`).
    public init(link: ControllerDriver, configuration: ConnectScheduler.Configuration, activeScanning: Bool,
                makeChallenge: (() -> ProofChallenge)? = nil) {
        dataPath = DataPathDriver(link: link)
        connect = ConnectSchedulerDriver(link: link, configuration: configuration, activeScanning: activeScanning)
        runner = ProofRunner(dataPath: dataPath, makeChallenge: makeChallenge)
        // The data path registers first, so it has seen each input before the connect
        // scheduler acts on it (see `ConnectSchedulerDriver`).
        dataPath.attach()
        connect.attach()
    }

    /// Starts a handshake on a connection the scheduler reported (`connect.onConnected`);
    /// the connect time in its timings runs from the last LE Create Connection.
    public func startProof(on handle: UInt16, tagId: String, key: TagKey, cachedHandles: ProofBook.CachedHandles?,
                           at now: Instant) {
        let connectDuration = connect.lastCreateConnectionAt.map { now - $0 }
        runner.start(handle: handle, tag: tagId, key: key, cachedHandles: cachedHandles, connectDuration: connectDuration, now: now)
    }
}
