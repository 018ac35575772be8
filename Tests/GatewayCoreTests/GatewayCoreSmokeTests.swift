import XCTest
@testable import GatewayCore

final class GatewayCoreSmokeTests: XCTestCase {
    func testModuleLoads() {}
}
