import EventLoop
import HCI
import XCTest
@testable import Host

/// A scripted controller: keeps the accept list the scheduler programs, counts
/// create-connection commands, and answers only when the test says so.
private struct ScriptedController {
    var scheduler: ConnectScheduler
    var acceptList: Set<ConnectPeer> = []
    var unanswered: [Opcode] = []
    /// Statuses for the unanswered commands that do not succeed (by position in `unanswered`).
    var failures: [Int: HCIStatus] = [:]
    var answeredCount = 0
    /// Entries the controller really holds (additions beyond fail with 0x07).
    var capacity = Int.max
    /// The next clear is refused (unspecified error): the list keeps its entries.
    var refuseNextClear = false
    var createCount = 0
    var initiating: ConnectPeer?? = nil // .some(nil): accept list; .some(peer): direct
    var log: [ConnectAction] = []
    var now = Instant.zero

    init(_ configuration: ConnectScheduler.Configuration = .init()) {
        scheduler = ConnectScheduler(configuration: configuration)
    }

    /// A roomy controller whose accept-list request for `peers` (tag i: peers[i]) was armed
    /// at 0 s, with the log emptied.
    static func armed(_ configuration: ConnectScheduler.Configuration = .init(), peers: [ConnectPeer]) -> ScriptedController {
        var c = ScriptedController(configuration)
        c.apply(c.scheduler.controllerReady(roomy, now: c.now))
        for (index, peer) in peers.enumerated() { c.apply(c.scheduler.want(tagIndex: index, peer: peer, now: c.now)) }
        c.answerAll()
        c.log.removeAll()
        return c
    }

    mutating func apply(_ actions: [ConnectAction]) {
        log.append(contentsOf: actions)
        for action in actions {
            switch action {
            case .clearAcceptList:
                if refuseNextClear {
                    refuseNextClear = false
                    failures[answeredCount + unanswered.count] = .unspecifiedError
                } else {
                    acceptList.removeAll()
                }
                unanswered.append(.leClearFilterAcceptList)
            case .addToAcceptList(let peer):
                if acceptList.count < capacity {
                    acceptList.insert(peer)
                } else {
                    failures[answeredCount + unanswered.count] = .memoryCapacityExceeded
                }
                unanswered.append(.leAddDeviceToFilterAcceptList)
            case .removeFromAcceptList(let peer):
                acceptList.remove(peer)
                unanswered.append(.leRemoveDeviceFromFilterAcceptList)
            case .createConnectionFromAcceptList:
                createCount += 1
                initiating = .some(nil)
                unanswered.append(.leCreateConnection)
            case .createConnection(let peer):
                createCount += 1
                initiating = .some(peer)
                unanswered.append(.leCreateConnection)
            case .cancelCreateConnection:
                unanswered.append(.leCreateConnectionCancel)
            default:
                break
            }
        }
    }

    /// Answers every outstanding command with success; a cancel also ends initiating
    /// with Connection Complete 0x02, as controllers do.
    mutating func answerAll() {
        while !unanswered.isEmpty {
            let opcode = unanswered.removeFirst()
            let status = failures.removeValue(forKey: answeredCount) ?? .success
            answeredCount += 1
            apply(scheduler.commandFinished(opcode, status: status, now: now))
            if opcode == .leCreateConnectionCancel, initiating != nil {
                initiating = nil
                apply(scheduler.connectionCompleted(status: .unknownConnection, handle: 0, peerAddress: BluetoothAddress(rawValue: 0),
                                                    peerAddressType: .publicDevice, now: now))
            }
        }
    }

    /// A wanted tag advertises: the pending request connects it.
    mutating func advertise(_ peer: ConnectPeer, handle: UInt16) -> Bool {
        guard let target = initiating else { return false }
        if let direct = target { guard direct == peer else { return false } } else { guard acceptList.contains(peer) else { return false } }
        initiating = nil
        apply(scheduler.connectionCompleted(status: .success, handle: handle, peerAddress: peer.address,
                                            peerAddressType: peer.addressType, now: now))
        return true
    }

    mutating func advance(to instant: Instant) {
        while let deadline = scheduler.nextDeadline, deadline <= instant {
            now = deadline
            apply(scheduler.timerFired(now: now))
            answerAll()
        }
        now = instant
    }

    var readRSSICount: Int { log.filter { if case .readRSSI = $0 { true } else { false } }.count }

    /// HCI commands the scheduler asked for: each one costs the agent a wake-up for its answer.
    var commandCount: Int {
        log.filter {
            switch $0 {
            case .clearAcceptList, .addToAcceptList, .removeFromAcceptList, .createConnectionFromAcceptList,
                 .createConnection, .cancelCreateConnection: true
            default: false
            }
        }.count
    }
}

private func peer(_ n: UInt64) -> ConnectPeer {
    ConnectPeer(address: BluetoothAddress(rawValue: 0xC0_00_00_00_00_00 | n), addressType: .randomDevice)
}

private func at(_ s: Int64) -> Instant { Instant(nanoseconds: s * 1_000_000_000) }

private func atMilliseconds(_ ms: Int64) -> Instant { Instant(nanoseconds: ms * 1_000_000) }

private let roomy = ConnectScheduler.Capabilities(acceptListSize: 8, canScanWhileInitiating: true)

final class ConnectSchedulerTests: XCTestCase {
    func testArmsWithOneAcceptListRequestAndNoTimer() {
        var c = ScriptedController()
        c.apply(c.scheduler.controllerReady(roomy, now: c.now))
        XCTAssertEqual(c.scheduler.phase, .disarmed)
        c.apply(c.scheduler.want(tagIndex: 0, peer: peer(1), now: c.now))
        XCTAssertEqual(c.scheduler.phase, .arming)
        XCTAssertEqual(c.log, [.clearAcceptList, .addToAcceptList(peer(1))])
        c.answerAll()
        XCTAssertEqual(c.scheduler.phase, .armed)
        XCTAssertEqual(c.createCount, 1)
        XCTAssertNil(c.scheduler.nextDeadline, "accept-list mode keeps no host timer")
    }

    func testLateAdvertiserIsConnectedBySameRequestSixtySecondsLater() {
        var c = ScriptedController()
        c.apply(c.scheduler.controllerReady(roomy, now: c.now))
        c.apply(c.scheduler.want(tagIndex: 3, peer: peer(3), now: c.now))
        c.answerAll()
        c.advance(to: at(60))
        XCTAssertEqual(c.createCount, 1)
        XCTAssertTrue(c.advertise(peer(3), handle: 0x40))
        XCTAssertEqual(c.log.last, .connected(tagIndex: 3, handle: 0x40))
        XCTAssertEqual(c.createCount, 1)
        XCTAssertEqual(c.scheduler.tagIndex(forHandle: 0x40), 3)
        XCTAssertEqual(c.scheduler.phase, .disarmed, "nothing else wanted: no request outstanding")
    }

    func testChangeWhileArmedGoesThroughCancelThenUpdateThenRearm() {
        var c = ScriptedController.armed(peers: [peer(1)])
        c.apply(c.scheduler.want(tagIndex: 1, peer: peer(2), now: c.now))
        XCTAssertEqual(c.log, [], "armed just now: the change settles first")
        XCTAssertEqual(c.scheduler.nextDeadline, at(1))
        c.now = at(1)
        c.apply(c.scheduler.timerFired(now: c.now))
        XCTAssertEqual(c.log, [.cancelCreateConnection])
        XCTAssertEqual(c.scheduler.phase, .disarming)
        // The cancel's Command Complete alone is not enough: Connection Complete 0x02 follows.
        c.apply(c.scheduler.commandFinished(.leCreateConnectionCancel, status: .success, now: c.now))
        XCTAssertEqual(c.scheduler.phase, .disarming)
        c.unanswered.removeAll()
        c.initiating = nil
        c.apply(c.scheduler.connectionCompleted(status: .unknownConnection, handle: 0, peerAddress: BluetoothAddress(rawValue: 0),
                                                peerAddressType: .publicDevice, now: c.now))
        XCTAssertEqual(c.scheduler.phase, .arming)
        XCTAssertEqual(c.log.suffix(1), [.addToAcceptList(peer(2))])
        c.answerAll()
        XCTAssertEqual(c.scheduler.phase, .armed)
        XCTAssertEqual(c.acceptList, [peer(1), peer(2)])
        XCTAssertEqual(c.createCount, 2)
    }

    func testCancelRacingAConnectionStillConnectsTheTag() {
        var c = ScriptedController()
        c.apply(c.scheduler.controllerReady(roomy, now: c.now))
        c.apply(c.scheduler.want(tagIndex: 0, peer: peer(1), now: c.now))
        c.answerAll()
        c.now = at(1) // past the settle: the want cancels at once
        c.apply(c.scheduler.want(tagIndex: 1, peer: peer(2), now: c.now))
        XCTAssertEqual(c.log.last, .cancelCreateConnection)
        // The tag connected before the controller saw the cancel, which then answers 0x0C.
        c.unanswered.removeAll()
        XCTAssertTrue(c.advertise(peer(1), handle: 7))
        XCTAssertTrue(c.log.contains(.connected(tagIndex: 0, handle: 7)))
        c.apply(c.scheduler.commandFinished(.leCreateConnectionCancel, status: .commandDisallowed, now: c.now))
        XCTAssertEqual(c.scheduler.phase, .arming)
        c.answerAll()
        XCTAssertEqual(c.acceptList, [peer(2)], "the connected tag leaves the list")
        XCTAssertEqual(c.scheduler.phase, .armed)
    }

    func testThreeTagsAreAllServedThroughTheAcceptList() {
        var c = ScriptedController()
        c.apply(c.scheduler.controllerReady(roomy, now: c.now))
        for i in 0..<3 { c.apply(c.scheduler.want(tagIndex: i, peer: peer(UInt64(i)), now: c.now)) }
        c.answerAll()
        XCTAssertEqual(c.acceptList.count, 3)
        for i in 0..<3 {
            XCTAssertTrue(c.advertise(peer(UInt64(i)), handle: UInt16(10 + i)), "tag \(i)")
            c.answerAll()
        }
        XCTAssertEqual(c.scheduler.connectionCount, 3)
        XCTAssertEqual((0..<3).map { c.scheduler.tagIndex(forHandle: UInt16(10 + $0)) }, [0, 1, 2])
    }

    func testMaxConnectionsHoldsBackArmingUntilADisconnect() {
        var c = ScriptedController(.init(maxConnections: 1))
        c.apply(c.scheduler.controllerReady(roomy, now: c.now))
        c.apply(c.scheduler.want(tagIndex: 0, peer: peer(0), now: c.now))
        c.apply(c.scheduler.want(tagIndex: 1, peer: peer(1), now: c.now))
        c.answerAll()
        XCTAssertTrue(c.advertise(peer(0), handle: 1))
        c.answerAll()
        XCTAssertEqual(c.scheduler.phase, .disarmed)
        XCTAssertEqual(c.createCount, 1)
        c.apply(c.scheduler.unwant(tagIndex: 0, now: c.now))
        c.apply(c.scheduler.disconnected(handle: 1, reason: .remoteUserTerminated, now: c.now))
        c.answerAll()
        XCTAssertEqual(c.scheduler.phase, .armed)
        XCTAssertTrue(c.advertise(peer(1), handle: 2))
    }

    func testMoreTagsThanAcceptListEntriesRotateFairly() {
        var c = rotatingList(size: 2, wanted: 3)
        XCTAssertEqual(c.acceptList.count, 2)
        XCTAssertNotNil(c.scheduler.nextDeadline, "a rotation timer only because the list overflows")
        var seen = c.acceptList
        c.advance(to: at(10))
        seen.formUnion(c.acceptList)
        XCTAssertEqual(seen, [peer(0), peer(1), peer(2)])
        XCTAssertEqual(c.scheduler.phase, .armed)
    }

    /// Tags 0..<wanted wanted at once, more than the accept list's `size` entries: the
    /// list rotates every 10 s.
    private func rotatingList(size: Int, wanted: Int) -> ScriptedController {
        var c = ScriptedController(.init(acceptListRotation: .seconds(10)))
        c.apply(c.scheduler.controllerReady(.init(acceptListSize: size, canScanWhileInitiating: true), now: c.now))
        for i in 0..<wanted { c.apply(c.scheduler.want(tagIndex: i, peer: peer(UInt64(i)), now: c.now)) }
        c.answerAll()
        return c
    }

    func testATurnThatSwapsEveryEntryClearsTheListInsteadOfRemovingEachOne() {
        var c = rotatingList(size: 4, wanted: 8)
        let first = c.acceptList
        c.log.removeAll()
        c.advance(to: at(10))
        XCTAssertTrue(c.acceptList.isDisjoint(with: first), "the turn brings the other four")
        XCTAssertEqual(c.acceptList.count, 4)
        XCTAssertEqual(c.log.first, .cancelCreateConnection)
        XCTAssertEqual(Array(c.log.dropFirst().prefix(1)), [.clearAcceptList], "\(c.log)")
        XCTAssertEqual(c.log.count, 7, "cancel, clear, four additions, create: not four removals and four additions")
        XCTAssertEqual(c.log.last, .createConnectionFromAcceptList)
        XCTAssertEqual(c.scheduler.phase, .armed)
    }

    func testAFullRotatingListTakesANewcomerAtItsTurnNotAtOnce() {
        var c = rotatingList(size: 2, wanted: 3)
        c.advance(to: at(10))
        XCTAssertEqual(c.acceptList.count, 2)
        XCTAssertTrue(c.acceptList.contains(peer(2)), "the turn: the least served first")
        let commands = c.commandCount
        // A newcomer, less served than anyone listed, while every listed tag is still wanted.
        c.advance(to: at(13))
        c.apply(c.scheduler.want(tagIndex: 3, peer: peer(3), now: c.now))
        c.answerAll()
        XCTAssertEqual(c.scheduler.nextDeadline, at(20), "no earlier re-arm than the turn's end")
        c.advance(to: atMilliseconds(19_999))
        XCTAssertEqual(c.commandCount, commands, "\(c.log)")
        c.advance(to: at(20))
        XCTAssertTrue(c.acceptList.contains(peer(3)), "in at the next turn")
        XCTAssertEqual(c.scheduler.phase, .armed)
    }

    func testDirectModeRotatesOnePeerAtATime() {
        var c = ScriptedController(.init(mode: .direct, directRotation: .seconds(5)))
        c.apply(c.scheduler.controllerReady(roomy, now: c.now))
        for i in 0..<3 { c.apply(c.scheduler.want(tagIndex: i, peer: peer(UInt64(i)), now: c.now)) }
        c.answerAll()
        var targets: [ConnectPeer] = []
        for step in 1...6 {
            if case .some(.some(let p)) = c.initiating { targets.append(p) }
            c.advance(to: at(Int64(step * 5)))
        }
        XCTAssertEqual(targets, [peer(0), peer(1), peer(2), peer(0), peer(1), peer(2)])
        XCTAssertTrue(c.acceptList.isEmpty)
    }

    func testNoScanningWhileInitiatingTakesTurnsAndSaysSo() {
        var c = ScriptedController(.init(alternation: .seconds(2)))
        c.apply(c.scheduler.controllerReady(.init(acceptListSize: 8, canScanWhileInitiating: false), now: c.now))
        XCTAssertTrue(c.log.contains { if case .log = $0 { true } else { false } })
        c.apply(c.scheduler.want(tagIndex: 0, peer: peer(0), now: c.now))
        c.answerAll()
        XCTAssertTrue(c.log.contains(.pauseScanning(reason: "controller cannot scan while initiating")))
        XCTAssertEqual(c.scheduler.nextDeadline, at(2))
        c.advance(to: at(3))
        XCTAssertTrue(c.log.contains(.resumeScanning))
        c.advance(to: at(4))
        XCTAssertEqual(c.scheduler.phase, .armed)
        XCTAssertEqual(c.createCount, 2)
    }

    func testAnOverflowingListRotatesOnAControllerThatCannotScanWhileInitiating() {
        var c = ScriptedController(.init(alternation: .seconds(2)))
        c.apply(c.scheduler.controllerReady(.init(acceptListSize: 2, canScanWhileInitiating: false), now: c.now))
        for i in 0..<3 { c.apply(c.scheduler.want(tagIndex: i, peer: peer(UInt64(i)), now: c.now)) }
        c.answerAll()
        var seen = c.acceptList
        for second in 1...12 {
            c.advance(to: at(Int64(second)))
            seen.formUnion(c.acceptList)
        }
        XCTAssertEqual(seen, [peer(0), peer(1), peer(2)], "every wanted tag gets initiating turns")
    }

    func testARefusedClearAndFullListDoNotShrinkTheCapacityToOne() {
        var c = rotatingList(size: 4, wanted: 8)
        c.capacity = 4
        XCTAssertEqual(c.acceptList.count, 4)
        // The turn clears the list; the controller refuses the clear, so every addition
        // finds the list full.
        c.refuseNextClear = true
        c.advance(to: at(10))
        XCTAssertEqual(c.scheduler.acceptListCapacity, 3, "one fewer than the list it tried to build")
    }

    func testTrackedTagReadsRSSIAndIsWantedAgainAfterLinkLoss() {
        var c = ScriptedController()
        c.apply(c.scheduler.controllerReady(roomy, now: c.now))
        c.apply(c.scheduler.want(tagIndex: 5, peer: peer(5), tracked: true, now: c.now))
        c.answerAll()
        XCTAssertTrue(c.advertise(peer(5), handle: 9))
        c.advance(to: at(3))
        XCTAssertEqual(c.readRSSICount, 3)
        c.apply(c.scheduler.disconnected(handle: 9, reason: .connectionTimeout, now: c.now))
        XCTAssertTrue(c.log.contains(.connectionLost(tagIndex: 5, handle: 9, reason: .connectionTimeout)))
        c.answerAll()
        XCTAssertEqual(c.scheduler.phase, .armed)
        XCTAssertTrue(c.acceptList.contains(peer(5)))
        XCTAssertTrue(c.advertise(peer(5), handle: 10))
        // The person left: the link is dropped.
        c.apply(c.scheduler.unwant(tagIndex: 5, now: c.now))
        XCTAssertEqual(c.log.last, .disconnect(handle: 10))
    }

    func testRefusalsAreRetriedOrLowerTheLimit() {
        var c = ScriptedController()
        c.apply(c.scheduler.controllerReady(roomy, now: c.now))
        c.apply(c.scheduler.want(tagIndex: 0, peer: peer(0), now: c.now))
        while let op = c.unanswered.first, op != .leCreateConnection {
            c.unanswered.removeFirst()
            c.apply(c.scheduler.commandFinished(op, status: .success, now: c.now))
        }
        c.unanswered.removeAll()
        c.apply(c.scheduler.commandFinished(.leCreateConnection, status: .commandDisallowed, now: c.now))
        XCTAssertEqual(c.scheduler.phase, .disarmed)
        XCTAssertEqual(c.scheduler.nextDeadline, at(1))
        c.advance(to: at(1))
        XCTAssertEqual(c.scheduler.phase, .armed)
        XCTAssertTrue(c.advertise(peer(0), handle: 1))
        c.apply(c.scheduler.want(tagIndex: 1, peer: peer(1), now: c.now))
        c.answerAll()
        // 0x0D with a connection up: take it as the controller's limit, no retry timer.
        c.apply(c.scheduler.commandFinished(.leCreateConnection, status: .limitedResources, now: c.now))
        XCTAssertEqual(c.scheduler.phase, .disarmed)
        XCTAssertNil(c.scheduler.nextDeadline)
    }

    func testFullAcceptListShrinksTheCapacity() {
        var c = ScriptedController()
        c.apply(c.scheduler.controllerReady(roomy, now: c.now))
        c.capacity = 2
        for i in 0..<3 { c.apply(c.scheduler.want(tagIndex: i, peer: peer(UInt64(i)), now: c.now)) }
        c.answerAll()
        XCTAssertEqual(c.scheduler.phase, .disarmed, "waits before refilling the list")
        c.advance(to: at(1))
        c.answerAll()
        XCTAssertEqual(c.acceptList.count, 2, "\(c.log)")
        XCTAssertEqual(c.scheduler.phase, .armed)
    }

    func testControllerResetForgetsConnectionsAndClearsTheListAgain() {
        var c = ScriptedController()
        c.apply(c.scheduler.controllerReady(roomy, now: c.now))
        c.apply(c.scheduler.want(tagIndex: 0, peer: peer(0), tracked: true, now: c.now))
        c.answerAll()
        XCTAssertTrue(c.advertise(peer(0), handle: 1))
        c.log.removeAll()
        c.apply(c.scheduler.controllerReset(now: c.now))
        XCTAssertEqual(c.log, [.connectionLost(tagIndex: 0, handle: 1, reason: .hardwareFailure)])
        XCTAssertEqual(c.scheduler.phase, .unavailable)
        c.unanswered.removeAll()
        c.log.removeAll()
        c.apply(c.scheduler.controllerReady(roomy, now: c.now))
        XCTAssertEqual(c.log, [.clearAcceptList, .addToAcceptList(peer(0))])
    }

    func testUnwantedConnectionIsDisconnected() {
        var c = ScriptedController()
        c.apply(c.scheduler.controllerReady(roomy, now: c.now))
        c.apply(c.scheduler.want(tagIndex: 0, peer: peer(0), now: c.now))
        c.answerAll()
        c.apply(c.scheduler.connectionCompleted(status: .success, handle: 4, peerAddress: peer(9).address,
                                                peerAddressType: .randomDevice, now: c.now))
        XCTAssertTrue(c.log.contains(.disconnect(handle: 4)))
    }

    func testResolvedIdentityTypesMatchTheAcceptListEntry() {
        let entry = ConnectPeer(address: peer(1).address, addressType: .randomDevice)
        XCTAssertTrue(entry.matches(entry.address, .randomIdentity))
        XCTAssertFalse(entry.matches(entry.address, .publicDevice))
        XCTAssertEqual(AddressType.randomIdentity.forAcceptList, .randomDevice)
        XCTAssertEqual(AddressType.guess(for: BluetoothAddress(rawValue: 0xC0_00_00_00_00_01)), .randomDevice)
        XCTAssertEqual(AddressType.guess(for: BluetoothAddress(rawValue: 0x00_11_22_33_44_55)), .publicDevice)
    }

    func testALockedOutTagLeftAloneIssuesNoRequestsForThreeHundredSeconds() {
        var c = ScriptedController()
        c.apply(c.scheduler.controllerReady(roomy, now: c.now))
        c.apply(c.scheduler.want(tagIndex: 0, peer: peer(0), now: c.now))
        c.answerAll()
        XCTAssertTrue(c.advertise(peer(0), handle: 1))
        c.apply(c.scheduler.unwant(tagIndex: 0, now: c.now))
        c.apply(c.scheduler.disconnected(handle: 1, reason: .remoteUserTerminated, now: c.now))
        c.answerAll()
        let before = c.createCount
        c.advance(to: at(300))
        XCTAssertEqual(c.createCount, before)
        XCTAssertEqual(c.scheduler.phase, .disarmed)
        XCTAssertNil(c.scheduler.nextDeadline)
    }

    /// Tags 1…5 wanted 100 ms apart while tag 0's request has been armed since 0 s.
    private func burstOfWants(settle: Duration) -> ScriptedController {
        var c = ScriptedController.armed(.init(selectionSettle: settle), peers: [peer(0)])
        for i in 1...5 {
            c.advance(to: atMilliseconds(Int64(i) * 100))
            c.apply(c.scheduler.want(tagIndex: i, peer: peer(UInt64(i)), now: c.now))
            c.answerAll()
        }
        return c
    }

    func testABurstOfWantsWithinTheSettleCostsOneRearm() {
        var c = burstOfWants(settle: .seconds(1))
        XCTAssertEqual(c.commandCount, 0, "\(c.log)")
        XCTAssertEqual(c.scheduler.nextDeadline, at(1), "re-armed once the request has been armed for the settle")
        c.advance(to: atMilliseconds(999))
        XCTAssertEqual(c.commandCount, 0)
        c.advance(to: at(1))
        XCTAssertEqual(c.log, [.cancelCreateConnection] + (1...5).map { .addToAcceptList(peer(UInt64($0))) } + [.createConnectionFromAcceptList])
        XCTAssertEqual(c.acceptList, Set((0...5).map { peer(UInt64($0)) }))
        XCTAssertEqual(c.scheduler.phase, .armed)
        XCTAssertNil(c.scheduler.nextDeadline, "settled: no timer left")
        c.advance(to: at(30))
        XCTAssertEqual(c.commandCount, 7)

        // The same burst re-arming at every change, as with no settle.
        var immediate = burstOfWants(settle: .zero)
        immediate.advance(to: at(30))
        XCTAssertEqual(immediate.commandCount, 15, "cancel, add, create for each of the five wants")
        XCTAssertEqual(immediate.acceptList, c.acceptList)
    }

    func testAWantAfterTheSettleRearmsAtOnce() {
        var c = ScriptedController.armed(peers: [peer(0)])
        c.advance(to: atMilliseconds(1_500))
        c.apply(c.scheduler.want(tagIndex: 1, peer: peer(1), now: c.now))
        XCTAssertEqual(c.log, [.cancelCreateConnection])
        c.answerAll()
        XCTAssertEqual(c.log, [.cancelCreateConnection, .addToAcceptList(peer(1)), .createConnectionFromAcceptList])
        XCTAssertEqual(c.scheduler.phase, .armed)
    }

    func testAWantTakenBackWithinTheSettleCostsNothing() {
        var c = ScriptedController.armed(peers: [peer(0)])
        c.apply(c.scheduler.want(tagIndex: 1, peer: peer(1), now: c.now))
        XCTAssertEqual(c.scheduler.nextDeadline, at(1))
        c.apply(c.scheduler.unwant(tagIndex: 1, now: c.now))
        XCTAssertNil(c.scheduler.nextDeadline)
        c.advance(to: at(5))
        XCTAssertEqual(c.commandCount, 0)
        XCTAssertEqual(c.scheduler.phase, .armed)
    }

    func testUrgentChangesDisarmAtOnceEvenWhileASelectionChangeSettles() {
        // A listed tag no longer wanted: the request could connect it.
        var c = ScriptedController.armed(peers: [peer(0), peer(1)])
        c.apply(c.scheduler.want(tagIndex: 2, peer: peer(2), now: c.now))
        XCTAssertEqual(c.log, [])
        c.now = atMilliseconds(200)
        c.apply(c.scheduler.unwant(tagIndex: 0, now: c.now))
        XCTAssertEqual(c.log, [.cancelCreateConnection])
        c.answerAll()
        XCTAssertEqual(c.acceptList, [peer(1), peer(2)])

        // A listed tag's address changed: the old entry is stale.
        c.now = atMilliseconds(300)
        c.log.removeAll()
        c.apply(c.scheduler.want(tagIndex: 1, peer: peer(11), now: c.now))
        XCTAssertEqual(c.log, [.cancelCreateConnection])
        c.answerAll()
        XCTAssertEqual(c.acceptList, [peer(11), peer(2)])

        // The connection limit is reached (a connection in the peripheral role does not end
        // initiating): no request may stay outstanding.
        var limited = ScriptedController.armed(.init(maxConnections: 1), peers: [peer(0)])
        limited.apply(limited.scheduler.want(tagIndex: 1, peer: peer(1), now: limited.now))
        XCTAssertEqual(limited.log, [])
        limited.now = atMilliseconds(100)
        limited.apply(limited.scheduler.connectionCompleted(status: .success, handle: 3, role: .peripheral, peerAddress: peer(9).address,
                                                            peerAddressType: .randomDevice, now: limited.now))
        XCTAssertEqual(limited.log, [.cancelCreateConnection])
        limited.answerAll()
        XCTAssertEqual(limited.scheduler.phase, .disarmed)
    }

}

/// Enrolment beside persistent connect: a phone's connection in the peripheral role and
/// initiation paused for the window.
final class ConnectSchedulerPeripheralTests: XCTestCase {
    func testAPeripheralConnectionIsNeverATagsLinkAndIsNotDisconnected() {
        var c = ScriptedController.armed(peers: [peer(0)])
        // A phone connects to our advertising from the very address a wanted tag uses.
        c.apply(c.scheduler.connectionCompleted(status: .success, handle: 7, role: .peripheral, peerAddress: peer(0).address,
                                                peerAddressType: .randomDevice, now: c.now))
        XCTAssertNil(c.scheduler.tagIndex(forHandle: 7))
        XCTAssertFalse(c.log.contains(.disconnect(handle: 7)), "\(c.log)")
        XCTAssertFalse(c.log.contains { if case .connected = $0 { true } else { false } }, "\(c.log)")
        XCTAssertEqual(c.scheduler.phase, .armed, "the request for the tag stays armed")
        // Its end tells the scheduler nothing about tags.
        c.log.removeAll()
        c.apply(c.scheduler.disconnected(handle: 7, reason: .remoteUserTerminated, now: c.now))
        XCTAssertFalse(c.log.contains { if case .connectionLost = $0 { true } else { false } }, "\(c.log)")
    }

    func testInitiationPausedForTheWindowThenResumed() {
        var c = ScriptedController.armed(peers: [peer(0), peer(1)])
        c.apply(c.scheduler.setInitiationPaused(true, now: c.now))
        XCTAssertTrue(c.log.contains(.cancelCreateConnection), "\(c.log)")
        XCTAssertTrue(c.log.contains { if case .log(let text) = $0 { text.contains("paused") } else { false } }, "\(c.log)")
        c.answerAll()
        XCTAssertEqual(c.scheduler.phase, .disarmed)
        // New wishes and time passing arm nothing while paused.
        let creates = c.createCount
        c.apply(c.scheduler.want(tagIndex: 2, peer: peer(2), now: c.now))
        c.answerAll()
        c.advance(to: at(60))
        XCTAssertEqual(c.createCount, creates)
        XCTAssertEqual(c.scheduler.wantedTags, [0, 1, 2], "wishes are kept")
        XCTAssertEqual(c.scheduler.setInitiationPaused(true, now: c.now), [], "pausing twice changes nothing")

        c.log.removeAll()
        c.apply(c.scheduler.setInitiationPaused(false, now: c.now))
        c.answerAll()
        XCTAssertEqual(c.scheduler.phase, .armed)
        XCTAssertEqual(c.createCount, creates + 1)
        XCTAssertEqual(c.acceptList, [peer(0), peer(1), peer(2)])
    }
}
