import BluetoothCrypto
import HCI
import Host
import XCTest
@testable import Enrolment

/// The address the gateway pairs from: its controller's public one, or a static random one
/// derived from the gateway (docs/pairing.md, "The gateway's address").
final class EnrolmentAddressTests: XCTestCase {
    func testTheStaticRandomAddressIsStablePerGatewayAndStatic() {
        let address = EnrolmentAddress.staticRandom(site: "S_TEST", gatewayId: "door-enrol")
        XCTAssertEqual(address, EnrolmentAddress.staticRandom(site: "S_TEST", gatewayId: "door-enrol"), "the same at every window")
        XCTAssertEqual(address.randomAddressKind, .staticRandom)
        XCTAssertNotEqual(address, EnrolmentAddress.staticRandom(site: "S_TEST", gatewayId: "door-2"))
        XCTAssertNotEqual(address, EnrolmentAddress.staticRandom(site: "S_OTHER", gatewayId: "door-enrol"))
        // The site and the id cannot run into each other.
        XCTAssertNotEqual(EnrolmentAddress.staticRandom(site: "ab", gatewayId: "c"), EnrolmentAddress.staticRandom(site: "a", gatewayId: "bc"))
        // The random part is never all zeros or all ones (Core Vol 6 Part B §1.3.2.1).
        for name in 0 ..< 2000 {
            let random = BluetoothAddress.staticRandom(derivedFrom: Array("\(name)".utf8)).rawValue & 0x3FFF_FFFF_FFFF
            XCTAssertTrue(random != 0 && random != 0x3FFF_FFFF_FFFF)
        }
    }

    func testTheIdentityIsThePublicAddressElseTheStaticRandomOne() {
        let random = BluetoothAddress("C7:11:22:33:44:55")!
        let publicAddress = BluetoothAddress("F0:F1:F2:F3:F4:F5")!
        XCTAssertEqual(EnrolmentAddress.identity(of: ControllerInfo(address: publicAddress)), AddressWithType(publicAddress, isRandom: false))
        XCTAssertEqual(EnrolmentAddress.identity(of: ControllerInfo(address: BluetoothAddress(rawValue: 0), staticRandomAddress: random)),
                       AddressWithType(random, isRandom: true))
        XCTAssertNil(EnrolmentAddress.identity(of: ControllerInfo(address: BluetoothAddress(rawValue: 0))), "nothing to pair from")
        XCTAssertNil(EnrolmentAddress.identity(of: ControllerInfo(address: BluetoothAddress(rawValue: 0xFFFF_FFFF_FFFF))))
    }

    func testAWindowPairsAndAdvertisesFromItsIdentityWithAFreshKey() {
        let random = AddressWithType(BluetoothAddress("C7:11:22:33:44:55")!, isRandom: true)
        let first = EnrolmentSession.Configuration.window(.seconds(60), method: .numericComparison, name: "door-1", address: random)
        XCTAssertEqual(first.localIdentity.address, random)
        XCTAssertEqual(first.advertisement, EnrolmentAdvertisement(name: "door-1", randomAddress: random.address))
        XCTAssertEqual(first.method, .numericComparison)
        let second = EnrolmentSession.Configuration.window(.seconds(60), method: .justWorks, name: "door-1", address: random)
        XCTAssertNotEqual(first.localIdentity.irk.revealed, second.localIdentity.irk.revealed, "a fresh IRK per window")
        let publicAddress = AddressWithType(BluetoothAddress("F0:F1:F2:F3:F4:F5")!, isRandom: false)
        XCTAssertNil(EnrolmentSession.Configuration.window(.seconds(60), method: .justWorks, name: "door-1", address: publicAddress)
            .advertisement.randomAddress)
    }

    func testTheWindowAdvertisesFromTheAddressBringUpSet() throws {
        let random = BluetoothAddress("C7:11:22:33:44:55")!
        let advertisement = EnrolmentAdvertisement(name: "door-1", randomAddress: random)
        // Legacy: not set again (a scanning controller would refuse it), advertised from.
        let legacy = advertisement.startCommands(family: .legacy)
        XCTAssertFalse(legacy.map(\.1).contains(.leSetRandomAddress))
        XCTAssertEqual(try LESetAdvertisingParametersCommand(packet: legacy[0].0).ownAddressType, .randomDevice)
        // Extended: the set's own random address, which a scanning controller takes.
        let extended = advertisement.startCommands(family: .extended)
        XCTAssertEqual(try LESetExtendedAdvertisingParametersCommand(packet: extended[0].0).ownAddressType, .randomDevice)
        XCTAssertEqual(try LESetAdvertisingSetRandomAddressCommand(packet: extended[1].0).address, random)
        // From a public address: public, nothing set.
        let publicLegacy = EnrolmentAdvertisement(name: "door-1").startCommands(family: .legacy)
        XCTAssertEqual(try LESetAdvertisingParametersCommand(packet: publicLegacy[0].0).ownAddressType, .publicDevice)
    }
}
