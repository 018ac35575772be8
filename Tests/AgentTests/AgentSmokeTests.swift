import XCTest
@testable import Agent

final class AgentSmokeTests: XCTestCase {
    func testModuleLoads() {}
}
