import XCTest
@testable import EventLoop

final class EventLoopSmokeTests: XCTestCase {
    func testModuleLoads() {}
}
