import XCTest
@testable import LEDs

final class LEDsSmokeTests: XCTestCase {
    func testModuleLoads() {}
}
