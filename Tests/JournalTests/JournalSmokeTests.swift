import XCTest
@testable import Journal

final class JournalSmokeTests: XCTestCase {
    func testModuleLoads() {}
}
