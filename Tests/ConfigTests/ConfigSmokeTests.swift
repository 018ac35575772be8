import XCTest
@testable import Config

final class ConfigSmokeTests: XCTestCase {
    func testModuleLoads() {}
}
