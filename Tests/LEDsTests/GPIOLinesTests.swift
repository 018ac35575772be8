#if canImport(Glibc)
import Glibc
#endif
import XCTest
@testable import LEDs

final class GPIOLinesTests: XCTestCase {
    func testMissingChipNamesTheChip() {
        let wiring = LEDWiring(chip: "gpiochip97", green: 17, amber: 27, red: 22)
        XCTAssertThrowsError(try GPIOLines(wiring: wiring)) { error in
            XCTAssertEqual(error as? GPIOError, .noSuchChip(chip: "gpiochip97"))
            XCTAssertTrue("\(error)".hasPrefix("no GPIO chip gpiochip97 (ls /dev/gpiochip*"), "\(error)")
        }
    }

    func testMissingChipPathNamesThePath() {
        let wiring = LEDWiring(chip: "/nonexistent/gpiochip3", green: 1, amber: 2, red: 3)
        XCTAssertThrowsError(try GPIOLines(wiring: wiring)) { error in
            XCTAssertEqual(error as? GPIOError, .noSuchChip(chip: "/nonexistent/gpiochip3"))
        }
    }

    func testAFileThatIsNotAChipIsRefused() {
        for path in ["/dev/null", "/etc/hostname", "/"] {
            let wiring = LEDWiring(chip: path, green: 1, amber: 2, red: 3)
            XCTAssertThrowsError(try GPIOLines(wiring: wiring), path) { error in
                XCTAssertEqual(error as? GPIOError, .notAGPIOChip(chip: path))
            }
        }
    }

    func testTheSameLineTwiceIsRefusedBeforeTouchingTheChip() {
        let wiring = LEDWiring(chip: "gpiochip97", green: 5, amber: 6, red: 5)
        XCTAssertThrowsError(try GPIOLines(wiring: wiring)) { error in
            XCTAssertEqual(error as? GPIOError, .sameLineTwice(chip: "gpiochip97", offset: 5, first: .green, second: .red))
        }
    }

    func testMessagesNameChipAndLine() {
        XCTAssertEqual(GPIOError.lineBusy(chip: "gpiochip0", offset: 17, consumer: "foo").description,
                       "gpiochip0 line 17: busy (used by \"foo\"); gpioinfo gpiochip0 shows who holds it")
        XCTAssertEqual(GPIOError.noSuchLine(chip: "gpiochip0", offset: 60, lineCount: 54).description,
                       "gpiochip0 has 54 lines; line 60 does not exist")
        XCTAssertTrue(GPIOError.permissionDenied(chip: "gpiochip0", offset: nil).description.contains("add the user to the gpio group"))
    }

    // MARK: A real GPIO character device (gpio-sim), when the kernel offers one

    func testDrivesSimulatedLinesOnARealKernel() throws {
        let sim = try GPIOSimulator.make(lines: 8)
        defer { sim.remove() }

        let wiring = LEDWiring(chip: sim.chipPath, green: 1, amber: 2, red: 5)
        var lines: GPIOLines? = try GPIOLines(wiring: wiring)
        XCTAssertEqual(try sim.pads([1, 2, 5]), [false, false, false], "requested dark")

        try lines?.show(LEDLevels(green: true, amber: false, red: true))
        XCTAssertEqual(try sim.pads([1, 2, 5]), [true, false, true])
        try lines?.show(.only(.amber))
        XCTAssertEqual(try sim.pads([1, 2, 5]), [false, true, false])

        // A second request for a held line names the chip, the line and the holder.
        XCTAssertThrowsError(try GPIOLines(wiring: LEDWiring(chip: sim.chipPath, green: 1, amber: 3, red: 4))) { error in
            XCTAssertEqual(error as? GPIOError, .lineBusy(chip: sim.chipPath, offset: 1, consumer: GPIOLines.consumer))
        }
        XCTAssertThrowsError(try GPIOLines(wiring: LEDWiring(chip: sim.chipPath, green: 3, amber: 4, red: 60))) { error in
            XCTAssertEqual(error as? GPIOError, .noSuchLine(chip: sim.chipPath, offset: 60, lineCount: 8))
        }

        lines = nil  // deinit darkens and releases
        XCTAssertEqual(try sim.pads([1, 2, 5]), [false, false, false])
        let again = try GPIOLines(wiring: wiring)
        again.release()
        XCTAssertTrue(again.isReleased)
    }

    func testActiveLowInvertsThePads() throws {
        let sim = try GPIOSimulator.make(lines: 4)
        defer { sim.remove() }
        let lines = try GPIOLines(wiring: LEDWiring(chip: sim.chipPath, green: 0, amber: 1, red: 2, activeLow: true))
        XCTAssertEqual(try sim.pads([0, 1, 2]), [true, true, true], "dark = high when active-low")
        try lines.show(.only(.red))
        XCTAssertEqual(try sim.pads([0, 1, 2]), [true, true, false])
        lines.release()
    }
}
