#if canImport(Glibc)
import Glibc
#endif
import SystemCalls
import HCI

/// `btsnoop:FILE`: replays what a controller sent in a capture, as fast as the host takes
/// it, then ends (`isExhausted`). For debugging, regression tests and benchmarks.
///
/// It stands in for a controller, so the host runs its normal bring-up against it:
///
/// - Every command the host sends is answered at once by a Command Complete with status
///   success, Num_HCI_Command_Packets 1 and zero-filled return parameters of the length the
///   Core specification gives that command (Reset, the Read Local … and LE Read … commands of
///   bring-up; one status byte for all others). Zero features mean the host picks legacy
///   scanning, which every capture's advertising reports can feed.
/// - Recorded packets are held back until the host first enables scanning (LE Set Scan
///   Enable or LE Set Extended Scan Enable with Enable = 1), so bring-up sees only the
///   synthetic answers; from then on the replay runs to the end of the file, whatever the
///   host does later.
/// - Replayed are the controller-to-host records in file order, except Command Complete and
///   Command Status events: they answer commands this host did not send. The host's own
///   recorded packets are skipped.
///
/// The file is streamed in 256 KiB chunks, so the size of a capture does not show in memory. A
/// record that cannot be right (impossible length, not btsnoop) ends the replay with
/// `.corruptReplayFile`; a last record cut short (a capture whose writer was killed) just
/// ends it.
public final class BTSnoopReplayTransport: HCITransport {
    public let path: String
    /// Recorded packets handed out per `receive()`, so the loop can run timers in between.
    public var batchSize = 64
    /// A batch ends early at a record more than this far (either way) from the batch's
    /// first: the packets of one `receive()` share one time, so it must be close to all
    /// of theirs.
    public var batchTimeSpanMicroseconds: Int64 = 10_000
    /// The recorded time of the last replayed record handed out (see the protocol).
    public private(set) var recordedTimeMicroseconds: Int64?
    /// Bytes read from the file at a time: large enough that reading costs nothing next to
    /// parsing, small enough not to show in the agent's peak memory.
    static let chunkSize = 256 << 10

    private var fileDescriptor_: Int32 = -1
    private var parser = BTSnoopParser()
    private var chunk = [UInt8]()
    private var endOfFile = false
    private var replayFinished = false
    private var lookahead: BTSnoop.Record?
    private var controller = ReplayController()
    private var answers: [HCIPacket] = []
    private var failure: TransportError?

    /// Recorded packets given to the host so far.
    public private(set) var replayedPacketCount = 0
    /// Records passed over: the host's own packets and recorded command answers.
    public private(set) var skippedRecordCount = 0

    public init(path: String) {
        self.path = path
    }

    deinit { close() }

    public var name: String { TransportSpec.btsnoop(path: path).description }
    public var isOpen: Bool { fileDescriptor_ >= 0 }
    public var fileDescriptor: Int32? { nil }
    public var hasPendingOutput: Bool { false }
    public var framingErrors: Int { 0 }
    /// Whether the host has enabled scanning, which starts the replay.
    public var isReplaying: Bool { controller.scanningEnabled }

    public var hasPendingInput: Bool {
        isOpen && (!answers.isEmpty || failure != nil || (controller.scanningEnabled && !replayFinished))
    }

    public var isExhausted: Bool { replayFinished && answers.isEmpty }

    public func open() throws(TransportError) {
        guard !isOpen else { return }
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .replayFile(path: path, errno: errno) }
        fileDescriptor_ = fd
        parser = BTSnoopParser()
        chunk = [UInt8](repeating: 0, count: Self.chunkSize)
        endOfFile = false
        replayFinished = false
        controller = ReplayController()
        answers = []
        failure = nil
        replayedPacketCount = 0
        recordedTimeMicroseconds = nil
        skippedRecordCount = 0
        // Read the header now, so a file that is no capture fails at open, not mid-run.
        do throws(TransportError) {
            lookahead = try nextRecord()
            if parser.datalink == nil { throw .corruptReplayFile(path: path, .notBTSnoop) }
        } catch {
            close()
            throw error
        }
    }

    public func close() {
        if fileDescriptor_ >= 0 { _ = Glibc.close(fileDescriptor_) }
        fileDescriptor_ = -1
        chunk = []
        parser = BTSnoopParser()
        lookahead = nil
        answers = []
    }

    public func receive() throws(TransportError) -> [HCIPacket] {
        guard isOpen else { throw .notOpen }
        if let failure { throw failure }
        var packets = answers
        answers.removeAll()
        guard controller.scanningEnabled else { return packets }
        var batchStart: Int64?
        do throws(TransportError) {
            while !replayFinished && packets.count < batchSize {
                guard let record = try nextReplayableRecord() else {
                    replayFinished = true
                    break
                }
                let time = record.timestampMicroseconds
                if let start = batchStart {
                    let distance = time.subtractingReportingOverflow(start)
                    if distance.overflow || distance.partialValue.magnitude > batchTimeSpanMicroseconds.magnitude {
                        lookahead = record
                        break
                    }
                } else {
                    batchStart = time
                }
                packets.append(record.packet)
                recordedTimeMicroseconds = time
                replayedPacketCount += 1
            }
        } catch {
            // Deliver what came before the corruption; the error follows on the next call.
            failure = error
            if packets.isEmpty { throw error }
        }
        return packets
    }

    public func send(_ packet: HCIPacket) throws(TransportError) {
        guard isOpen else { throw .notOpen }
        if let answer = controller.answer(packet) { answers.append(answer) }
    }

    public func flush() throws(TransportError) {}

    private func nextReplayableRecord() throws(TransportError) -> BTSnoop.Record? {
        while true {
            let next: BTSnoop.Record?
            if let lookahead {
                next = lookahead
                self.lookahead = nil
            } else {
                next = try nextRecord()
            }
            guard let record = next else { return nil }
            if ReplayController.shouldReplay(record) { return record }
            skippedRecordCount += 1
        }
    }

    /// The next record of the file, reading another chunk when the parser runs dry.
    private func nextRecord() throws(TransportError) -> BTSnoop.Record? {
        while true {
            do {
                if let record = try parser.nextRecord() { return record }
            } catch {
                throw .corruptReplayFile(path: path, error)
            }
            if endOfFile { return nil }
            try readChunk()
        }
    }

    private func readChunk() throws(TransportError) {
        let count = SystemCall.retryingInterrupts {
            chunk.withUnsafeMutableBytes { read(fileDescriptor_, $0.baseAddress, $0.count) }
        }
        if count > 0 {
            parser.append(chunk[0 ..< count])
        } else if count == 0 {
            endOfFile = true
        } else {
            throw .replayFile(path: path, errno: errno)
        }
    }
}
