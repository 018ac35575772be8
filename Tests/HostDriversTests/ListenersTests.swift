import XCTest
@testable import HostDrivers

final class ListenersTests: XCTestCase {
    func testListenersAreToldInTheOrderTheyRegistered() {
        let listeners = Listeners<Int>()
        var heard: [String] = []
        listeners.add { heard.append("first \($0)") }
        listeners.add { heard.append("second \($0)") }
        listeners.notify(1)
        XCTAssertEqual(heard, ["first 1", "second 1"])
    }

    func testARemovedListenerHearsNothingMore() {
        let listeners = Listeners<Int>()
        var heard: [Int] = []
        let registration = listeners.add { heard.append($0) }
        listeners.notify(1)
        listeners.remove(registration)
        listeners.remove(registration)
        listeners.notify(2)
        XCTAssertEqual(heard, [1])
        XCTAssertEqual(listeners.count, 0)
    }

    func testAListenerAddedWhileTellingHearsFromTheNextValueOn() {
        let listeners = Listeners<Int>()
        var heard: [String] = []
        var added = false
        listeners.add { value in
            heard.append("first \(value)")
            guard !added else { return }
            added = true
            listeners.add { heard.append("late \($0)") }
        }
        listeners.notify(1)
        XCTAssertEqual(heard, ["first 1"], "not told the value under way")
        listeners.notify(2)
        XCTAssertEqual(heard, ["first 1", "first 2", "late 2"])
    }

    func testAListenerRemovedWhileTellingIsNotToldTheValueUnderWay() {
        let listeners = Listeners<Int>()
        var heard: [String] = []
        var second: Listeners<Int>.Registration?
        listeners.add { value in
            heard.append("first \(value)")
            if let second { listeners.remove(second) }
        }
        second = listeners.add { heard.append("second \($0)") }
        listeners.add { heard.append("third \($0)") }
        listeners.notify(1)
        XCTAssertEqual(heard, ["first 1", "third 1"])
        XCTAssertEqual(listeners.count, 2)
    }

    func testAListenerMayRemoveItself() {
        let listeners = Listeners<Int>()
        var heard: [String] = []
        var once: Listeners<Int>.Registration?
        once = listeners.add { value in
            heard.append("once \(value)")
            if let once { listeners.remove(once) }
        }
        listeners.add { heard.append("always \($0)") }
        listeners.notify(1)
        listeners.notify(2)
        XCTAssertEqual(heard, ["once 1", "always 1", "always 2"])
    }

    func testARegistrationOfAnotherListRemovesNothing() {
        let one = Listeners<Int>()
        let other = Listeners<Int>()
        var heard: [Int] = []
        let registration = one.add { _ in }
        other.add { heard.append($0) }
        other.remove(registration)
        other.notify(3)
        XCTAssertEqual(heard, [3])
    }

    func testListenersOfSeveralValuesTakeThemApart() {
        let listeners = Listeners<(String, Int)>()
        var heard: [String] = []
        listeners.add { name, value in heard.append("\(name)=\(value)") }
        listeners.notify(("rssi", -60))
        XCTAssertEqual(heard, ["rssi=-60"])
    }
}
