import XCTest
@testable import Host

final class HostSmokeTests: XCTestCase {
    func testModuleLoads() {}
}
