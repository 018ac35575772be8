import EventLoop
import XCTest
@testable import LEDs

/// One test per row of the pattern table in docs/leds.md, then the overlaps. Times are
/// milliseconds on a virtual clock.
final class LEDPatternEngineTests: XCTestCase {
    func testDarkWithoutInputs() {
        let engine = LEDPatternEngine()
        assertTimeline(engine, from: 0, to: 5000, [Step(0, "...")])
        XCTAssertNil(engine.nextChange(after: ms(0)))
    }

    // all | on 300 ms at start | lamp test
    func testLampTestAllOnFor300Milliseconds() {
        var engine = LEDPatternEngine()
        engine.lampTest(at: ms(1000))
        assertTimeline(engine, from: 0, to: 3000, [Step(0, "..."), Step(1000, "GAR"), Step(1300, "...")])
    }

    // green | steady | scanning, controller healthy
    func testGreenSteadyWhileScanning() {
        var engine = LEDPatternEngine()
        engine.setScanning(true, at: ms(0))
        assertTimeline(engine, from: 0, to: 10_000, [Step(0, "G..")])
        XCTAssertNil(engine.nextChange(after: ms(0)))
    }

    // green | 1 Hz blink | check-ins paused by the server, scanning
    func testGreenBlinksAtOneHertzWhilePausedAndScanning() {
        var engine = LEDPatternEngine()
        engine.setScanning(true, at: ms(0))
        engine.setPaused(true, at: ms(1200))
        engine.setPaused(true, at: ms(1900)) // a repeated report keeps the phase
        assertTimeline(engine, from: 0, to: 3500, [
            Step(0, "G.."), Step(1700, "..."), Step(2200, "G.."), Step(2700, "..."), Step(3200, "G.."),
        ])
        // The decision blinks overlay it; then the blink goes on in its own phase.
        engine.decision(at: ms(3300))
        assertTimeline(engine, from: 3300, to: 4300, [
            Step(3300, "G.."), Step(3400, "..."), Step(3500, "G.."), Step(3600, "..."), Step(4200, "G.."),
        ])
        // Not scanning: dark, paused or not. Resumed: steady again.
        engine.setScanning(false, at: ms(5000))
        assertTimeline(engine, from: 5000, to: 6000, [Step(5000, "...")])
        engine.setScanning(true, at: ms(6000))
        engine.setPaused(false, at: ms(6000))
        assertTimeline(engine, from: 6000, to: 8000, [Step(6000, "G..")])
    }

    // green | off | not scanning
    func testGreenOffWhenScanningStops() {
        var engine = LEDPatternEngine()
        engine.setScanning(true, at: ms(0))
        engine.setScanning(false, at: ms(500))
        assertTimeline(engine, from: 500, to: 2000, [Step(500, "...")])
    }

    // green | two 100 ms blinks | a checkin or checkout was just decided
    func testDecisionTwoBlinksOverSteadyGreen() {
        var engine = LEDPatternEngine()
        engine.setScanning(true, at: ms(0))
        engine.decision(at: ms(2000))
        assertTimeline(engine, from: 0, to: 5000, [
            Step(0, "G.."),
            // on 100 (indistinguishable from steady), off 100, on 100, off 100, steady again
            Step(2100, "..."), Step(2200, "G.."), Step(2300, "..."), Step(2400, "G.."),
        ])
    }

    func testDecisionTwoBlinksWhileNotScanning() {
        var engine = LEDPatternEngine()
        engine.decision(at: ms(100))
        assertTimeline(engine, from: 0, to: 2000, [
            Step(0, "..."), Step(100, "G.."), Step(200, "..."), Step(300, "G.."), Step(400, "..."),
        ])
    }

    // amber | off | outbox empty, server reachable
    func testAmberOffWhenOutboxEmpty() {
        var engine = LEDPatternEngine()
        engine.setOutbox(.waiting, at: ms(0))
        engine.setOutbox(.empty, at: ms(1200))
        assertTimeline(engine, from: 1200, to: 5000, [Step(1200, "...")])
    }

    // amber | 1 Hz blink | events waiting
    func testAmberBlinksAtOneHertzFromWhenEventsStartedWaiting() {
        var engine = LEDPatternEngine()
        engine.setOutbox(.waiting, at: ms(250))
        assertTimeline(engine, from: 250, to: 3000, [
            Step(250, ".A."), Step(750, "..."), Step(1250, ".A."), Step(1750, "..."),
            Step(2250, ".A."), Step(2750, "..."),
        ])
    }

    func testRepeatedOutboxReportDoesNotRestartTheBlink() {
        var engine = LEDPatternEngine()
        engine.setOutbox(.waiting, at: ms(0))
        engine.setOutbox(.waiting, at: ms(700))
        assertTimeline(engine, from: 700, to: 2000, [Step(700, "..."), Step(1000, ".A."), Step(1500, "...")])
    }

    // amber | steady | server refuses the gateway or dead letters exist
    func testAmberSteadyWhenRefused() {
        var engine = LEDPatternEngine()
        engine.setOutbox(.refused, at: ms(1100))
        assertTimeline(engine, from: 1100, to: 4000, [Step(1100, ".A.")])
        XCTAssertNil(engine.nextChange(after: ms(1100)))
    }

    // amber | 4 Hz blink | events cannot be stored (disk trouble)
    func testAmberBlinksAtFourHertzWhileEventsCannotBeStoredOverAnyOutboxState() {
        var engine = LEDPatternEngine()
        engine.setScanning(true, at: ms(0))
        engine.setOutbox(.refused, at: ms(0))
        engine.setStoreTrouble(true, at: ms(1000))
        engine.setStoreTrouble(true, at: ms(1060))
        assertTimeline(engine, from: 900, to: 1500, [
            Step(900, "GA."), Step(1125, "G.."), Step(1250, "GA."), Step(1375, "G.."),
        ])
        engine.setStoreTrouble(false, at: ms(1500))
        assertTimeline(engine, from: 1500, to: 3000, [Step(1500, "GA.")])
        XCTAssertNil(engine.nextChange(after: ms(1500)), "steady again: the outbox's own state")
    }

    func testStoreTroubleBlinkIsNotTheOneHertzWaitingBlink() {
        var engine = LEDPatternEngine()
        engine.setOutbox(.waiting, at: ms(0))
        engine.setStoreTrouble(true, at: ms(0))
        assertTimeline(engine, from: 0, to: 500, [Step(0, ".A."), Step(125, "..."), Step(250, ".A."), Step(375, "...")])
    }

    // red | 4 Hz blink | controller down or recovering
    func testRedBlinksAtFourHertzWhileControllerDown() {
        var engine = LEDPatternEngine()
        engine.setControllerDown(true, at: ms(1000))
        assertTimeline(engine, from: 1000, to: 2000, [
            Step(1000, "..R"), Step(1125, "..."), Step(1250, "..R"), Step(1375, "..."),
            Step(1500, "..R"), Step(1625, "..."), Step(1750, "..R"), Step(1875, "..."),
        ])
        engine.setControllerDown(false, at: ms(2000))
        assertTimeline(engine, from: 2000, to: 3000, [Step(2000, "...")])
    }

    func testGreenGoesDarkWhileControllerDownAndReturnsWhenItAnswers() {
        var engine = LEDPatternEngine()
        engine.setScanning(true, at: ms(0))
        engine.setControllerDown(true, at: ms(500))
        assertTimeline(engine, from: 0, to: 800, [Step(0, "G.."), Step(500, "..R"), Step(625, "..."), Step(750, "..R")])
        engine.setControllerDown(false, at: ms(800))
        assertTimeline(engine, from: 800, to: 2000, [Step(800, "G..")])
    }

    func testRepeatedControllerDownReportKeepsThePhase() {
        var engine = LEDPatternEngine()
        engine.setControllerDown(true, at: ms(0))
        engine.setControllerDown(true, at: ms(60))
        assertTimeline(engine, from: 60, to: 300, [Step(60, "..R"), Step(125, "..."), Step(250, "..R")])
    }

    // red | three 100 ms flashes | a proof failed
    func testProofFailureThreeFlashes() {
        var engine = LEDPatternEngine()
        engine.proofFailed(at: ms(500))
        assertTimeline(engine, from: 0, to: 3000, [
            Step(0, "..."),
            Step(500, "..R"), Step(600, "..."), Step(700, "..R"), Step(800, "..."), Step(900, "..R"), Step(1000, "..."),
        ])
    }

    // red | steady | fatal configuration error; the agent is exiting
    func testFatalConfigurationRedSteadyOthersDark() {
        var engine = LEDPatternEngine()
        engine.setScanning(true, at: ms(0))
        engine.setOutbox(.refused, at: ms(0))
        engine.fatalConfiguration(at: ms(1000))
        assertTimeline(engine, from: 0, to: 5000, [Step(0, "GA."), Step(1000, "..R")])
        XCTAssertNil(engine.nextChange(after: ms(1000)))
    }

    // MARK: Priorities

    func testLampTestOverridesEverything() {
        var engine = LEDPatternEngine()
        engine.fatalConfiguration(at: ms(0))
        engine.lampTest(at: ms(0))
        assertTimeline(engine, from: 0, to: 1000, [Step(0, "GAR"), Step(300, "..R")])
    }

    func testFatalBeatsProofFlashesAndControllerBlink() {
        var engine = LEDPatternEngine()
        engine.setControllerDown(true, at: ms(0))
        engine.proofFailed(at: ms(0))
        engine.fatalConfiguration(at: ms(50))
        assertTimeline(engine, from: 50, to: 2000, [Step(50, "..R")])
    }

    func testProofFlashesOverlayTheControllerBlinkThenItResumesInPhase() {
        var engine = LEDPatternEngine()
        engine.setControllerDown(true, at: ms(0))
        engine.proofFailed(at: ms(1050))
        assertTimeline(engine, from: 1000, to: 2000, [
            Step(1000, "..R"),
            // flashes from 1050: on (already on), 1150 off, 1250 on, 1350 off, 1450 on, 1550 off
            Step(1150, "..."), Step(1250, "..R"), Step(1350, "..."), Step(1450, "..R"), Step(1550, "..."),
            // 1650: the flashes are over; the 4 Hz blink is in its "off" half until 1750
            Step(1750, "..R"), Step(1875, "..."),
        ])
    }

    func testDecisionBlinksAndOtherLEDsAreIndependent() {
        var engine = LEDPatternEngine()
        engine.setScanning(true, at: ms(0))
        engine.setOutbox(.waiting, at: ms(0))
        engine.decision(at: ms(450))
        assertTimeline(engine, from: 400, to: 1100, [
            Step(400, "GA."), Step(500, "G.."), Step(550, "..."), Step(650, "G.."), Step(750, "..."), Step(850, "G.."),
            Step(1000, "GA."),
        ])
    }

    func testRefusedBeatsWaiting() {
        var engine = LEDPatternEngine()
        engine.setOutbox(.waiting, at: ms(0))
        assertTimeline(engine, from: 0, to: 600, [Step(0, ".A."), Step(500, "...")])
        engine.setOutbox(.refused, at: ms(600))
        assertTimeline(engine, from: 600, to: 3000, [Step(600, ".A.")])
    }

    func testLampTestOverlaysAndStateResumes() {
        var engine = LEDPatternEngine()
        engine.setScanning(true, at: ms(0))
        engine.setOutbox(.waiting, at: ms(0))
        engine.lampTest(at: ms(0))
        assertTimeline(engine, from: 0, to: 1600, [Step(0, "GAR"), Step(300, "GA."), Step(500, "G.."), Step(1000, "GA."), Step(1500, "G..")])
    }

    func testNewDecisionRestartsTheBlinks() {
        var engine = LEDPatternEngine()
        engine.decision(at: ms(0))
        engine.decision(at: ms(250))
        assertTimeline(engine, from: 250, to: 1000, [Step(250, "G.."), Step(350, "..."), Step(450, "G.."), Step(550, "...")])
    }

    func testExtremeInstantsDoNotTrap() {
        var engine = LEDPatternEngine()
        engine.setControllerDown(true, at: Instant(nanoseconds: .max - 1_000))
        engine.setOutbox(.waiting, at: Instant(nanoseconds: .min + 1_000))
        engine.proofFailed(at: Instant(nanoseconds: .min))
        _ = engine.levels(at: Instant(nanoseconds: .max))
        _ = engine.nextChange(after: Instant(nanoseconds: .max - 10))
        _ = engine.levels(at: Instant(nanoseconds: .min))
        _ = engine.nextChange(after: Instant(nanoseconds: .min))
    }
}
