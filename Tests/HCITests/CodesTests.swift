import XCTest
@testable import HCI

final class CodesTests: XCTestCase {
    func testSupportedCommandsBits() {
        var commands = SupportedCommands.none
        XCTAssertEqual(commands.octets.count, 64)
        commands.insert(.reset)
        commands.insert(.setEventMask)
        XCTAssertEqual(commands.octets[5], 0xC0)
        XCTAssertEqual(commands.contains(.reset), true)
        XCTAssertEqual(commands.contains(.leSetExtendedScanParameters), false)
        XCTAssertNil(commands.contains(.readLocalSupportedCommands))
        XCTAssertFalse(commands.contains(octet: 64, bit: 0))
        XCTAssertFalse(commands.contains(octet: -1, bit: 0))
        XCTAssertFalse(commands.contains(octet: 0, bit: 8))

        // The extended scan/connect trio sits in octet 37, bits 5–7.
        var extended = SupportedCommands(octets: [UInt8](repeating: 0, count: 37) + [0b1110_0000])
        XCTAssertTrue(extended.hasExtendedScanningAndInitiating)
        extended = SupportedCommands(octets: [UInt8](repeating: 0, count: 37) + [0b0110_0000])
        XCTAssertFalse(extended.hasExtendedScanningAndInitiating)
    }

    func testEveryKnownOpcodeHasItsOwnBit() {
        let opcodes: [Opcode] = [
            .disconnect, .setEventMask, .reset, .readLocalVersionInformation, .readLocalSupportedFeatures,
            .readBufferSize, .readBDAddr, .readRSSI, .leSetEventMask, .leReadBufferSize,
            .leReadLocalSupportedFeatures, .leSetRandomAddress, .leSetAdvertisingParameters, .leSetAdvertisingData,
            .leSetScanResponseData, .leSetAdvertisingEnable, .leSetScanParameters, .leSetScanEnable,
            .leCreateConnection, .leCreateConnectionCancel, .leReadFilterAcceptListSize, .leClearFilterAcceptList,
            .leAddDeviceToFilterAcceptList, .leRemoveDeviceFromFilterAcceptList, .leConnectionUpdate,
            .leReadSupportedStates, .leSetAdvertisingSetRandomAddress, .leSetExtendedAdvertisingParameters,
            .leSetExtendedAdvertisingData,
            .leSetExtendedScanResponseData, .leSetExtendedAdvertisingEnable, .leSetExtendedScanParameters,
            .leSetExtendedScanEnable, .leExtendedCreateConnection,
        ]
        var seen = Set<SupportedCommands.Bit>()
        for opcode in opcodes {
            let bit = SupportedCommands.bit(for: opcode)
            XCTAssertNotNil(bit, "\(opcode)")
            if let bit { XCTAssertTrue(seen.insert(bit).inserted, "\(opcode) shares a bit") }
            var commands = SupportedCommands.none
            commands.insert(opcode)
            XCTAssertEqual(commands.contains(opcode), true)
            XCTAssertEqual(commands.octets.reduce(0) { $0 + $1.nonzeroBitCount }, 1)
        }
    }

    func testLESupportedStates() {
        // Bumble's controller: 'ffff3fffff030000' — no scanning + initiating combination.
        let bumble = LESupportedStates(rawValue: 0x0000_03FF_FF3F_FFFF)
        XCTAssertFalse(bumble.canScanWhileInitiating(active: false))
        XCTAssertFalse(bumble.canScanWhileInitiating(active: true))
        XCTAssertTrue(bumble.canScanWhileCentral(active: false))
        let all = LESupportedStates(rawValue: 0x0000_01FF_FFFF_FFFF)
        XCTAssertTrue(all.canScanWhileInitiating(active: false))
        XCTAssertTrue(all.canScanWhileInitiating(active: true))
    }

    func testFeatureAndStatusNames() throws {
        let features = try LEFeatures.codec.decode([0x00, 0x10, 0, 0, 0, 0, 0, 0], context: .returnParameters(.leReadLocalSupportedFeatures))
        XCTAssertEqual(features, .extendedAdvertising)
        XCTAssertTrue(LEFeatures(rawValue: 1 << 11).contains(.codedPHY))
        XCTAssertEqual(HCIStatus.commandDisallowed.name, "command disallowed")
        XCTAssertEqual(HCIStatus(rawValue: 0x0D).name, "connection rejected due to limited resources")
        XCTAssertEqual(HCIStatus(rawValue: 0x02).name, "unknown connection identifier")
        XCTAssertEqual(HCIStatus(rawValue: 0x3E).name, "connection failed to be established")
        XCTAssertEqual(HCIStatus(rawValue: 0x0C).description, "0x0c (command disallowed)")
        XCTAssertEqual(LEEventMask.advertisingReport.rawValue, 1 << 1)
        XCTAssertEqual(LEEventMask.extendedAdvertisingReport.rawValue, 1 << 12)
        XCTAssertEqual(LEEventMask.enhancedConnectionComplete.rawValue, 1 << 9)
    }

    func testReturnParametersRoundTrip() throws {
        func check<R: HCIReturnParameters>(_ value: R) throws {
            let bytes = value.encoded
            XCTAssertEqual(bytes.count, R.opcode.returnParametersLength, "\(R.self)")
            XCTAssertEqual(try R(returnParameters: bytes[...]), value)
            let complete = HCICommandComplete(opcode: R.opcode, returnParameters: bytes[...])
            XCTAssertEqual(try complete.decode(R.self), value)
            for cut in 0 ..< bytes.count {
                XCTAssertThrowsError(try R(returnParameters: bytes[0 ..< cut]))
            }
        }
        try check(LocalVersionInformation(hciVersion: 9, hciRevision: 0x1234, lmpVersion: 9, manufacturer: 0x0002, lmpSubversion: 0x2209))
        var commands = SupportedCommands.none
        commands.insert(.leSetExtendedScanEnable)
        try check(LocalSupportedCommands(commands: commands))
        try check(LocalSupportedFeatures(features: .leSupportedController))
        try check(BufferSize(aclDataPacketLength: 1021, synchronousDataPacketLength: 64, totalACLDataPackets: 8, totalSynchronousDataPackets: 1))
        try check(BDAddr(address: BluetoothAddress("00:1A:7D:DA:71:13")!))
        try check(ConnectionRSSI(connectionHandle: 0x40, rssi: -67))
        try check(LEBufferSize(aclDataPacketLength: 251, totalACLDataPackets: 8))
        try check(LELocalSupportedFeatures(features: [.extendedAdvertising, .codedPHY]))
        try check(LESupportedStatesReturn(states: [.passiveScanningAndInitiating]))
        try check(FilterAcceptListSize(size: 16))
        try check(ExtendedAdvertisingParametersReturn(selectedTxPower: -4))
        XCTAssertTrue(LEBufferSize(aclDataPacketLength: 0, totalACLDataPackets: 0).isShared)
        XCTAssertThrowsError(try HCICommandComplete(opcode: .reset, returnParameters: [0]).decode(BDAddr.self))
    }

    func testRealReadBDAddrAnswer() throws {
        // Command Complete, 1 credit, Read BD_ADDR, success, 00:1A:7D:DA:71:13.
        let packet = HCIPacket(type: .event, payload: [0x0E, 0x0A, 0x01, 0x09, 0x10, 0x00, 0x13, 0x71, 0xDA, 0x7D, 0x1A, 0x00])
        guard case .commandComplete(let complete) = try HCIEvent(packet) else { return XCTFail() }
        XCTAssertEqual(try complete.decode(BDAddr.self).address.description, "00:1A:7D:DA:71:13")
    }
}
