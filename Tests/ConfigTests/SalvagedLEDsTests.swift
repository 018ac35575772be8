import Config
import XCTest

/// A broken configuration still names its LEDs when `[leds]` itself is fine, so the agent
/// can show "fatal configuration error" (red steady) before it exits.
final class SalvagedLEDsTests: XCTestCase {
    func testValidLEDsSurviveAnErrorElsewhere() {
        let text = """
        [gateway]
        id = "door-1"
        [presence]
        enter_rssi = -80
        exit_rssi = -75
        [leds]
        chip = "gpiochip1"
        green = 5
        amber = 6
        red = 13
        active_low = true
        """
        do {
            _ = try GatewayConfiguration.parse(text: text, file: "gateway.toml", fileSystem: InMemoryFileSystem())
            XCTFail("exit_rssi above enter_rssi must be refused")
        } catch {
            XCTAssertEqual(error.salvagedLEDs?.chip, "gpiochip1")
            XCTAssertEqual(error.salvagedLEDs?.red, 13)
            XCTAssertEqual(error.salvagedLEDs?.activeLow, true)
        }
    }

    func testInvalidLEDsAreNotSalvaged() {
        let text = """
        [gateway]
        [leds]
        green = 5
        amber = 5
        red = 13
        """
        do {
            _ = try GatewayConfiguration.parse(text: text, file: "gateway.toml", fileSystem: InMemoryFileSystem())
            XCTFail("a missing gateway id must be refused")
        } catch {
            XCTAssertNil(error.salvagedLEDs, "green and amber on one line is not a wiring to light")
        }
    }

    func testNoLEDsTableSalvagesNothing() {
        do {
            _ = try GatewayConfiguration.parse(text: "[gateway]\n", file: "gateway.toml", fileSystem: InMemoryFileSystem())
            XCTFail("a missing gateway id must be refused")
        } catch {
            XCTAssertNil(error.salvagedLEDs)
        }
    }
}
