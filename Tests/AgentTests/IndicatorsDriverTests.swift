import Config
import EventLoop
import Journal
import JournalFixtures
import LEDs
import XCTest
@testable import Agent

/// The indicators on virtual time, with a real notification socket standing in for the
/// service manager and the LEDs on an output that keeps what it was told to show.
final class IndicatorsDriverTests: XCTestCase {
    private final class ShownLevels: LEDOutput {
        var last: LEDLevels?
        func show(_ levels: LEDLevels) throws(GPIOError) { last = levels }
    }

    private var manager: DatagramReceiver!
    private var virtual: VirtualEventLoop!
    private var facts = IndicatorsDriver.StatusFacts(scanning: false, paused: false, present: 0, backlog: 0, outbox: .empty,
                                                     diskTrouble: nil, clockSynchronised: true)
    private var factsRead = 0

    override func setUpWithError() throws {
        manager = try DatagramReceiver()
        virtual = VirtualEventLoop()
    }

    private func makeDriver(watchdog: Duration?) throws -> IndicatorsDriver {
        IndicatorsDriver(loop: virtual.loop, log: LogSink(minimumLevel: .error, destination: .terminal),
                         notifier: try SystemdNotifier(socketAddress: manager.address), watchdogInterval: watchdog,
                         facts: { [unowned self] in
                             self.factsRead += 1
                             return self.facts
                         })
    }

    /// Every datagram the driver has sent so far.
    private func received() -> [String] {
        var all: [String] = []
        while let datagram = manager.receive() { all.append(String(decoding: datagram, as: UTF8.self)) }
        return all
    }

    private func advance(by duration: Duration) throws {
        try virtual.advance(to: virtual.loop.now + duration)
    }

    func testReadyOnceWhenScanningStartsAndTheWatchdogFedOnlyWhileTheControllerAnswers() throws {
        let driver = try makeDriver(watchdog: .seconds(20))
        driver.start(GatewayConfiguration(gateway: .init(id: "door-indicators", stateDirectory: "/nonexistent")))
        // Before the controller is up: status lines at half the watchdog interval capped at
        // five seconds, no READY, no keep-alive.
        try advance(by: .seconds(10))
        XCTAssertEqual(received(), ["STATUS=controller unavailable · 0 present · outbox 0",
                                    "STATUS=controller unavailable · 0 present · outbox 0"])
        // SIGHUP before READY: no RELOADING (READY=1 means scanning).
        driver.reloading()()
        XCTAssertEqual(received(), [])

        facts.scanning = true
        facts.present = 3
        driver.controllerUp()
        XCTAssertEqual(received(), ["READY=1", "STATUS=scanning · 3 present · outbox 0\nWATCHDOG=1"])
        // Fed at every status tick (five seconds, half the feed period) while the
        // controller answers.
        try advance(by: .seconds(20))
        XCTAssertEqual(received(), Array(repeating: "STATUS=scanning · 3 present · outbox 0\nWATCHDOG=1", count: 4))

        driver.controllerUp()
        XCTAssertEqual(received(), ["STATUS=scanning · 3 present · outbox 0"], "READY once; no feed sooner than due")

        facts.scanning = false
        driver.controllerDown()
        try advance(by: .seconds(20))
        XCTAssertFalse(received().contains { $0.contains("WATCHDOG=1") }, "not fed once the controller is down")

        let done = driver.reloading()
        XCTAssertEqual(received().first?.hasPrefix("RELOADING=1\nMONOTONIC_USEC="), true)
        done()
        XCTAssertEqual(received(), ["READY=1"])
        driver.stopping()
        XCTAssertEqual(received(), ["STOPPING=1"])
        driver.stop()
        let reads = factsRead
        try advance(by: .seconds(60))
        XCTAssertEqual(received(), [], "no status line after stop")
        XCTAssertEqual(factsRead, reads)
    }

    func testTheStatusLineSaysPausedDiskTroubleAndAnUnsynchronisedClock() throws {
        let driver = try makeDriver(watchdog: nil)
        facts = .init(scanning: true, paused: true, present: 2, backlog: 17, outbox: .waiting, diskTrouble: "read-only",
                      clockSynchronised: false)
        driver.storeTrouble(true)
        XCTAssertEqual(received(), ["STATUS=scanning · paused · 2 present · outbox 17 · disk trouble: read-only · clock unsynchronised"])
    }

    func testTheLEDsFollowTheDoor() throws {
        let driver = try makeDriver(watchdog: nil)
        let output = ShownLevels()
        driver.startLEDs(on: output, storeTrouble: false)
        XCTAssertEqual(output.last, LEDLevels(green: true, amber: true, red: true), "lamp test first")
        try advance(by: .seconds(1))
        XCTAssertEqual(output.last?.green, false, "not scanning yet")
        facts.scanning = true
        driver.controllerUp()
        try advance(by: .seconds(1))
        XCTAssertEqual(output.last, LEDLevels(green: true, amber: false, red: false), "steady green while scanning")
        driver.proofFailed()
        XCTAssertEqual(output.last?.red, true, "a failed proof flashes red")
        try advance(by: .seconds(10))
        XCTAssertEqual(output.last?.red, false)
        facts.outbox = .refused
        driver.updateStatus()
        XCTAssertEqual(output.last?.amber, true, "steady amber when the server refuses the token")
        facts.scanning = false
        driver.controllerDown()
        XCTAssertEqual(output.last?.green, false, "green off when the controller is down")
        driver.stop()
    }
}
