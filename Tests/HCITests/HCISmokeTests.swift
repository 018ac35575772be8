import XCTest
@testable import HCI

final class HCISmokeTests: XCTestCase {
    func testModuleLoads() {}
}
