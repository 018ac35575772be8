import HCI
import XCTest
@testable import Host

/// The commands that put a peripheral mode's advertising on air (docs/proof-protocol.md,
/// "The reference tag"; docs/pairing.md): their order, and the own address type and
/// random address, in both command families.
final class ConnectableAdvertisingTests: XCTestCase {
    private let address = BluetoothAddress(rawValue: 0xC7_11_22_33_44_55)
    private let data: [UInt8] = [0x02, 0x01, 0x06, 0x04, 0x09, 0x74, 0x61, 0x67]

    func testLegacyFromTheRandomAddressSetsItFirstAndAdvertisesFromIt() throws {
        let advertising = ConnectableAdvertising(advertisingData: data, intervalUnits: 160, randomAddress: address)
        let commands = advertising.startCommands(family: .legacy)
        XCTAssertEqual(commands.map(\.1), [.leSetRandomAddress, .leSetAdvertisingParameters, .leSetAdvertisingData,
                                           .leSetScanResponseData, .leSetAdvertisingEnable])
        XCTAssertEqual(try LESetRandomAddressCommand(packet: commands[0].0).address, address)
        let parameters = try LESetAdvertisingParametersCommand(packet: commands[1].0)
        XCTAssertEqual(parameters.type, .connectableUndirected)
        XCTAssertEqual(parameters.ownAddressType, .randomDevice)
        XCTAssertEqual([parameters.intervalMin, parameters.intervalMax], [160, 160])
        XCTAssertEqual(try LESetAdvertisingDataCommand(packet: commands[2].0).data, data)
    }

    func testLegacyWithoutARandomAddressAdvertisesFromThePublicOne() throws {
        let commands = ConnectableAdvertising(advertisingData: data, intervalUnits: 160).startCommands(family: .legacy)
        XCTAssertEqual(commands.map(\.1), [.leSetAdvertisingParameters, .leSetAdvertisingData,
                                           .leSetScanResponseData, .leSetAdvertisingEnable])
        XCTAssertEqual(try LESetAdvertisingParametersCommand(packet: commands[0].0).ownAddressType, .publicDevice)
    }

    func testExtendedSetsTheSetsRandomAddressAfterItsParameters() throws {
        let advertising = ConnectableAdvertising(advertisingData: data, intervalUnits: 320, randomAddress: address)
        let commands = advertising.startCommands(family: .extended)
        XCTAssertEqual(commands.map(\.1), [.leSetExtendedAdvertisingParameters, .leSetAdvertisingSetRandomAddress,
                                           .leSetExtendedAdvertisingData, .leSetExtendedScanResponseData,
                                           .leSetExtendedAdvertisingEnable])
        let parameters = try LESetExtendedAdvertisingParametersCommand(packet: commands[0].0)
        XCTAssertEqual(parameters.properties, [.legacy, .connectable, .scannable])
        XCTAssertEqual(parameters.ownAddressType, .randomDevice)
        let random = try LESetAdvertisingSetRandomAddressCommand(packet: commands[1].0)
        XCTAssertEqual(random.handle, parameters.handle)
        XCTAssertEqual(random.address, address)
        XCTAssertTrue(commands.allSatisfy { $0.1.isExtendedFamily }, "one family after reset")
    }

    func testStoppingUsesTheSameFamily() {
        XCTAssertEqual(ConnectableAdvertising.stopCommand(family: .legacy).1, .leSetAdvertisingEnable)
        XCTAssertEqual(ConnectableAdvertising.stopCommand(family: .extended).1, .leSetExtendedAdvertisingEnable)
    }
}
