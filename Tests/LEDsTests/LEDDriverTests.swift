import EventLoop
import XCTest
@testable import LEDs

/// Records every write, with the virtual time it happened at.
final class RecordingOutput: LEDOutput {
    let clock: ManualClock
    var writes: [Step] = []
    var failNext = 0

    init(clock: ManualClock) { self.clock = clock }

    func show(_ levels: LEDLevels) throws(GPIOError) {
        if failNext > 0 {
            failNext -= 1
            throw .system(chip: "fake", offset: 1, operation: "setting", errno: 5)
        }
        writes.append(Step(milliseconds: clock.now.nanoseconds / 1_000_000, levels: levels))
    }
}

/// Runs the loop on virtual time to `end` ms, with `moments` (ms → action) on the way:
/// timers fire exactly at their deadlines, without sleeping.
func runVirtually(_ virtual: VirtualEventLoop, until end: Int64, at moments: [Int64: () -> Void] = [:]) {
    for (at, action) in moments { virtual.loop.schedule(at: ms(at), action) }
    XCTAssertNoThrow(try virtual.advance(to: ms(end)))
}

final class LEDDriverTests: XCTestCase {
    func testWritesOnlyOnChangesOnTheLoopTimeline() {
        let clock = ManualClock()
        let virtual = VirtualEventLoop(clock: clock)
        let loop = virtual.loop
        let output = RecordingOutput(clock: clock)
        let driver = LEDDriver(loop: loop, output: output)
        driver.update { engine, now in
            engine.lampTest(at: now)
            engine.setScanning(true, at: now)
        }
        runVirtually(virtual, until: 2000, at: [
            1000: { driver.update { engine, now in engine.decision(at: now) } },
            1500: { driver.update { engine, now in engine.setScanning(true, at: now) } },  // no change: no write
        ])
        XCTAssertEqual(output.writes, [
            Step(0, "GAR"), Step(300, "G.."),
            Step(1100, "..."), Step(1200, "G.."), Step(1300, "..."), Step(1400, "G.."),
        ])
        XCTAssertEqual(loop.scheduledTimerCount, 0, "a steady state arms no timer")
    }

    func testBlinkKeepsOneTimerArmedAndStopDarkens() {
        let clock = ManualClock()
        let virtual = VirtualEventLoop(clock: clock)
        let loop = virtual.loop
        let output = RecordingOutput(clock: clock)
        let driver = LEDDriver(loop: loop, output: output)
        driver.update { engine, now in engine.setControllerDown(true, at: now) }
        runVirtually(virtual, until: 300)
        XCTAssertEqual(output.writes, [Step(0, "..R"), Step(125, "..."), Step(250, "..R")])
        XCTAssertEqual(loop.scheduledTimerCount, 1)
        driver.stop()
        XCTAssertEqual(loop.scheduledTimerCount, 0)
        XCTAssertEqual(output.writes.last, Step(300, "..."))
    }

    func testFailuresAreCountedAndReportedOncePerRun() {
        let clock = ManualClock()
        let virtual = VirtualEventLoop(clock: clock)
        let loop = virtual.loop
        let output = RecordingOutput(clock: clock)
        let driver = LEDDriver(loop: loop, output: output)
        var reported: [GPIOError] = []
        driver.onError = { reported.append($0) }
        output.failNext = 3
        driver.update { engine, now in engine.setControllerDown(true, at: now) }
        runVirtually(virtual, until: 400)
        XCTAssertEqual(driver.failureCount, 3)
        XCTAssertEqual(reported.count, 1)
        // After the failures the driver caught up with the blink.
        XCTAssertEqual(output.writes, [Step(375, "...")])
    }
}
