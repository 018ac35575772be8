import XCTest
@testable import Forwarder

final class ForwarderSmokeTests: XCTestCase {
    func testModuleLoads() {}
}
