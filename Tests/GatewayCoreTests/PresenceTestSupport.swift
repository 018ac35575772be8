import EventLoop
import HCI
import XCTest
@testable import GatewayCore

/// Drives a `PresenceEngine` with a virtual clock and collects what it says.
struct PresenceHarness {
    var engine: PresenceEngine
    let clock = ManualClock()
    var events: [PresenceEvent] = []

    static let wallOrigin: Int64 = 1_789_012_345_678

    init(settings: PresenceSettings = PresenceSettings(), persons: [PresencePerson]) {
        engine = PresenceEngine(settings: settings, persons: persons,
                                wallClock: WallClockMapping(anchor: .zero, wallMilliseconds: Self.wallOrigin))
    }

    /// One person `p1` with tag `t1` (index 0) by default.
    init(settings: PresenceSettings = PresenceSettings(), requireProof: Bool = false) {
        self.init(settings: settings, persons: [PresencePerson(id: "p1", requireProof: requireProof,
                                                               tags: [PresenceTag(index: 0, id: "t1")])])
    }

    var now: Instant { clock.now }

    static func address(_ tag: Int) -> BluetoothAddress { BluetoothAddress(rawValue: 0xC0_11_22_33_44_00 | UInt64(tag & 0xFF)) }

    /// Moves the clock to `seconds` (firing timers on the way), then feeds one sample.
    mutating func sample(_ rssi: Int, at seconds: Double, tag: Int = 0, txPower: Int? = -59) {
        advance(to: seconds)
        events += engine.sample(tagIndex: tag, rssi: rssi, address: Self.address(tag), addressType: .randomDevice,
                                txPower: txPower, at: clock.now)
    }

    /// Samples every `every` seconds from `from` up to (not including) `to`.
    mutating func samples(_ rssi: Int, from: Double, to: Double, every: Double = 0.5, tag: Int = 0) {
        var t = from
        while t < to - 1e-9 {
            sample(rssi, at: t, tag: tag)
            t += every
        }
    }

    /// Fires every deadline up to `seconds`, one at a time, as the event loop would.
    mutating func advance(to seconds: Double) {
        let target = Instant(nanoseconds: Int64((seconds * 1e9).rounded()))
        while let deadline = engine.nextDeadline, deadline <= target {
            if deadline > clock.now { clock.advance(to: deadline) }
            events += engine.advance(to: clock.now)
            // A stale entry gives nothing; the loop continues with the next one.
            if engine.nextDeadline == deadline { break }
        }
        if target > clock.now { clock.advance(to: target) }
        events += engine.advance(to: clock.now)
    }

    var checkins: [PresenceDecision] {
        events.compactMap { if case let .checkin(d) = $0 { d } else { nil } }
    }

    var checkouts: [PresenceDecision] {
        events.compactMap { if case let .checkout(d) = $0 { d } else { nil } }
    }

    var transitions: [(from: PresenceState, to: PresenceState, at: Instant)] {
        events.compactMap { if case let .stateChanged(_, from, to, at) = $0 { (from, to, at) } else { nil } }
    }

    var waits: [ProofWaitReason] {
        events.compactMap { if case let .waitingForProof(_, reason) = $0 { reason } else { nil } }
    }

    func state(_ person: String = "p1") -> PresenceState? { engine.state(of: person) }
}

func seconds(_ s: Double) -> Instant { Instant(nanoseconds: Int64((s * 1e9).rounded())) }
