import Advertisements
import BluetoothCrypto
import HCI
import SecurityManager
import XCTest
@testable import Enrolment

/// The identity a phone hands over must be tied to its link and be nobody else's
/// (docs/security.md, "Enrolment").
final class IdentityCheckTests: XCTestCase {
    private let phoneKeyBytes: [UInt8] = [0xF0, 0xE1, 0xD2, 0xC3, 0xB4, 0xA5, 0x96, 0x87, 0x78, 0x69, 0x5A, 0x4B, 0x3C, 0x2D, 0x1E, 0x0F]
    private let otherKeyBytes: [UInt8] = Array(1 ... 16)
    private let staticIdentity = BluetoothAddress(rawValue: 0xC4_55_66_77_88_99)
    private let publicIdentity = BluetoothAddress(rawValue: 0x00_1B_DC_01_02_03)

    private var phoneKey: IdentityResolvingKey { IdentityResolvingKey(phoneKeyBytes)! }
    private var otherKey: IdentityResolvingKey { IdentityResolvingKey(otherKeyBytes)! }

    private func identity(_ key: [UInt8]?, _ address: BluetoothAddress, random: Bool = true) -> PeerIdentity {
        PeerIdentity(irk: key.map { SecretKey128(Octets128(mostSignificantFirst: $0)!) }, address: address, isRandom: random)
    }

    private func random(_ address: BluetoothAddress) -> AddressWithType { AddressWithType(address, isRandom: true) }

    func testTheIRKMustResolveThePrivateAddressThePhoneConnectedFrom() {
        let check = IdentityCheck(enrolling: "u_1")
        let own = phoneKey.resolvablePrivateAddress(random: 0x12_3456)
        let foreign = otherKey.resolvablePrivateAddress(random: 0x12_3456)
        XCTAssertNil(check.refusal(of: identity(phoneKeyBytes, staticIdentity), connectedFrom: random(own)))
        XCTAssertEqual(check.refusal(of: identity(phoneKeyBytes, staticIdentity), connectedFrom: random(foreign)),
                       .irkDoesNotResolveTheLink(connectedFrom: foreign))
        // A non-resolvable private address ties nothing.
        let nonResolvable = BluetoothAddress(rawValue: 0x12_34_56_78_9A_BC)
        XCTAssertEqual(check.refusal(of: identity(phoneKeyBytes, staticIdentity), connectedFrom: random(nonResolvable)),
                       .identityAddressNotTheLinks(identity: staticIdentity, connectedFrom: nonResolvable))
    }

    func testFromAPublicOrStaticAddressTheIdentityAddressMustBeIt() {
        let check = IdentityCheck(enrolling: "u_1")
        XCTAssertNil(check.refusal(of: identity(phoneKeyBytes, staticIdentity), connectedFrom: random(staticIdentity)))
        XCTAssertNil(check.refusal(of: identity(phoneKeyBytes, publicIdentity, random: false),
                                   connectedFrom: AddressWithType(publicIdentity, isRandom: false)))
        XCTAssertEqual(check.refusal(of: identity(phoneKeyBytes, publicIdentity, random: false),
                                     connectedFrom: random(staticIdentity)),
                       .identityAddressNotTheLinks(identity: publicIdentity, connectedFrom: staticIdentity))
        // The same six octets as a public address are another address.
        XCTAssertEqual(check.refusal(of: identity(phoneKeyBytes, staticIdentity, random: false), connectedFrom: random(staticIdentity)),
                       .identityAddressNotTheLinks(identity: staticIdentity, connectedFrom: staticIdentity))
    }

    func testAnAllZeroIRKIsNoKeyAndStandsOnlyFromTheIdentityAddress() {
        let check = IdentityCheck(enrolling: "u_1")
        // The responder hands an all-zero IRK up as none.
        XCTAssertNil(check.refusal(of: identity(nil, staticIdentity), connectedFrom: random(staticIdentity)))
        let rpa = phoneKey.resolvablePrivateAddress(random: 0x00_0001)
        XCTAssertEqual(check.refusal(of: identity(nil, staticIdentity), connectedFrom: random(rpa)), .allZeroIRK(connectedFrom: rpa))
        XCTAssertTrue(IdentityRefusal.allZeroIRK(connectedFrom: rpa).message.contains("all-zero"))
    }

    func testAnIdentityConfiguredForAnotherPersonIsRefusedButNotTheSamePersons() {
        let persons: [(personId: String, identities: [TagIdentity])] = [
            ("u_badge", [.address(BluetoothAddress(rawValue: 0xC1_22_33_44_55_66))]),
            ("u_roster", [.iBeacon(uuid: Array(repeating: 7, count: 16), major: 1, minor: 2), .irk(phoneKeyBytes)]),
            ("u_static", [.address(staticIdentity)]),
        ]
        let rpa = phoneKey.resolvablePrivateAddress(random: 0x2A_0000)
        let forAnother = IdentityCheck(enrolling: "u_new", persons: persons)
        XCTAssertEqual(forAnother.refusal(of: identity(phoneKeyBytes, publicIdentity, random: false), connectedFrom: random(rpa)),
                       .irkOfAnotherPerson("u_roster"))
        XCTAssertEqual(forAnother.refusal(of: identity(nil, staticIdentity), connectedFrom: random(staticIdentity)),
                       .addressOfAnotherPerson("u_static"))
        XCTAssertTrue(IdentityRefusal.irkOfAnotherPerson("u_roster").message.contains("u_roster"))
        // The person's own phone, enrolled again.
        let again = IdentityCheck(enrolling: "u_roster", persons: persons)
        XCTAssertNil(again.refusal(of: identity(phoneKeyBytes, publicIdentity, random: false), connectedFrom: random(rpa)))
    }

    func testAnIRKThatResolvesAnotherPersonsRecentAddressIsRefused() {
        let seen = otherKey.resolvablePrivateAddress(random: 0x11_2233)
        // An IRK made to resolve that address: the hash is 24 bits, found by trying keys
        // (the phone's key with its last four octets counting up; this count is the first
        // that works, found once by the same loop from 0: about 2^24 tries on average).
        var forged = phoneKeyBytes
        let counter: UInt32 = 50_724_158
        forged[12 ... 15] = [UInt8(counter >> 24 & 0xFF), UInt8(counter >> 16 & 0xFF), UInt8(counter >> 8 & 0xFF), UInt8(counter & 0xFF)]
        XCTAssertTrue(IdentityResolvingKey(forged)!.resolves(seen))
        XCTAssertFalse(phoneKey.resolves(seen))
        let link = IdentityResolvingKey(forged)!.resolvablePrivateAddress(random: 0x00_4242)
        let check = IdentityCheck(enrolling: "u_new", persons: [], recentlySeen: [(seen, "u_victim")])
        XCTAssertEqual(check.refusal(of: identity(forged, staticIdentity), connectedFrom: random(link)),
                       .resolvesAnotherPersonsAddress(personId: "u_victim", address: seen))
        // An honest key resolves none of them; the same person's own recent address is no conflict.
        XCTAssertNil(check.refusal(of: identity(phoneKeyBytes, staticIdentity),
                                   connectedFrom: random(phoneKey.resolvablePrivateAddress(random: 7))))
        let own = IdentityCheck(enrolling: "u_victim", persons: [], recentlySeen: [(seen, "u_victim")])
        XCTAssertNil(own.refusal(of: identity(forged, staticIdentity), connectedFrom: random(link)))
    }

    func testTheMatcherListsTheAddressesItResolvedWithTheirPerson() {
        var matcher = TagMatcher(tags: [ConfiguredTag(tagId: "t1", personId: "u_victim", identities: [.irk(otherKeyBytes)])])
        let seen = otherKey.resolvablePrivateAddress(random: 0x11_2233)
        let stranger = phoneKey.resolvablePrivateAddress(random: 0x11_2233)
        XCTAssertNotNil(matcher.matchIndex(address: seen, addressType: .randomDevice, keys: .init()))
        XCTAssertNil(matcher.matchIndex(address: stranger, addressType: .randomDevice, keys: .init()))
        XCTAssertEqual(matcher.recentlyResolvedAddresses.map(\.address), [seen])
        XCTAssertEqual(matcher.recentlyResolvedAddresses.map(\.personId), ["u_victim"])
    }
}
