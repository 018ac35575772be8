import XCTest
@testable import HCITransport

final class HCITransportSmokeTests: XCTestCase {
    func testModuleLoads() {}
}
