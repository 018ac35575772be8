import XCTest
@testable import HCI

/// The bytes every command, return parameters and event encoded to with the
/// hand-written codecs, before the declarative field lists replaced them: the generic
/// path must give the same bytes and decode them back to the same values.
final class GoldenBytesTests: XCTestCase {
    static let commandPackets: [String: String] = [
        "reset": "030c00",
        "setEventMask": "010c089088000200800020",
        "readLocalVersionInformation": "011000",
        "readLocalSupportedCommands": "021000",
        "readLocalSupportedFeatures": "031000",
        "readBufferSize": "051000",
        "readBDAddr": "091000",
        "readRSSI": "0514024201",
        "disconnect": "060403010213",
        "leSetEventMask": "0120084f1a0b0000000000",
        "leReadBufferSize": "022000",
        "leReadLocalSupportedFeatures": "032000",
        "leReadSupportedStates": "1c2000",
        "leSetRandomAddress": "0520065544332211c0",
        "leReadFilterAcceptListSize": "0f2000",
        "leClearFilterAcceptList": "102000",
        "leAddDeviceToFilterAcceptList": "112007015544332211c0",
        "leRemoveDeviceFromFilterAcceptList": "1220070022334455667a",
        "leSetAdvertisingParameters": "06200fa000b00002010122334455667a0502",
        "leSetAdvertisingData": "0820200702010603ff3412000000000000000000000000000000000000000000000000",
        "leSetAdvertisingDataFull": "0820201f0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
        "leSetAdvertisingEnable": "0a200101",
        "leSetExtendedAdvertisingParameters": "362019021300452301debc0a06010122334455667a01f90304020901",
        "leSetExtendedAdvertisingData": "37202c01010028000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f2021222324252627",
        "leSetExtendedAdvertisingEnable": "39200a01020102030502000000",
        "leSetExtendedAdvertisingDisableAll": "3920020000",
        "leSetScanParameters": "0b2007019006e8050101",
        "leSetScanEnable": "0c20020101",
        "leSetExtendedScanParameters1M": "4120080000010090069006",
        "leSetExtendedScanParametersBoth": "41200d0101050164003200002c019600",
        "leSetExtendedScanEnable": "422006010202010403",
        "leSetScanResponseData": "092020060509446f6f7200000000000000000000000000000000000000000000000000",
        "leSetExtendedScanResponseData": "38200a030201060509446f6f72",
        "leCreateConnection": "0d201961003100010122334455667a01180028000300f40101000200",
        "leExtendedCreateConnection1M": "43201a00000122334455667a0160003000180028000000f40100000000",
        "leExtendedCreateConnectionAll": "43203a0101005544332211c00710000800180028000300f4010100020020001000180028000000f4010000000030001800180028000300f40101000200",
        "leCreateConnectionCancel": "0e2000",
    ]

    static let returnParameterBytes: [String: String] = [
        "localVersionInformation": "000c34120b5d00cdab",
        "localSupportedCommands": "00000306090c0f1215181b1e2124272a2d303336393c3f4245484b4e5154575a5d606366696c6f7275787b7e8184878a8d909396999c9fa2a5a8abaeb1b4b7babd",
        "localSupportedFeatures": "00efcdab8967452301",
        "bufferSize": "00fd034008000300",
        "bdAddr": "005544332211c0",
        "connectionRSSI": "004000c3",
        "leBufferSize": "00fb000c",
        "leLocalSupportedFeatures": "003f4d000001000000",
        "leSupportedStates": "00ffffffffff030000",
        "filterAcceptListSize": "0010",
        "extendedAdvertisingParameters": "00fc",
        "failedStatus": "0c00",
    ]

    static let eventPackets: [String: String] = [
        "commandComplete": "0e07020514004000c3",
        "commandStatus": "0f040c010d20",
        "disconnectionComplete": "050400410013",
        "numberOfCompletedPackets": "13090240000300ff0e0201",
        "hardwareError": "100142",
        "connectionCompleteLegacy": "3e1301004000010122334455667a28000100000102",
        "connectionCompleteEnhanced": "3e1f0a00410000005544332211c022334455667a05040302015a18000000f40105",
        "connectionCompleteV2": "3e22293e4200000122334455667a00000000000000000000000030000000f40100010302",
        "connectionUpdateComplete": "3e0a03004000500004000002",
        "advertisingReport": "3e0f0201000122334455667a03020106ba",
        "extendedAdvertisingReport": "3e1e0d010100005544332211c00100017fce0000000000000000000403ff0102",
        "unknownEvent": "5703010203",
        "unknownSubevent": "3e037f0908",
    ]

    func testEveryCommandEncodesToItsGoldenBytesAndBack() throws {
        XCTAssertEqual(Set(CodecSamples.commands.map(\.name)), Set(Self.commandPackets.keys))
        for (name, command) in CodecSamples.commands {
            XCTAssertEqual(command.packet.payload.hex, Self.commandPackets[name], name)
            XCTAssertTrue(try Self.decodes(command, from: Self.commandPackets[name] ?? ""), name)
        }
    }

    func testEveryReturnParametersDecodesItsGoldenBytesIdentically() throws {
        XCTAssertEqual(Set(CodecSamples.returnParameters.map(\.name)), Set(Self.returnParameterBytes.keys))
        for (name, value) in CodecSamples.returnParameters {
            XCTAssertEqual(value.encoded.hex, Self.returnParameterBytes[name], name)
            XCTAssertTrue(try Self.decodes(value, from: Self.returnParameterBytes[name] ?? ""), name)
        }
    }

    func testEveryEventEncodesToItsGoldenBytesAndBack() throws {
        XCTAssertEqual(Set(CodecSamples.events.map(\.name)), Set(Self.eventPackets.keys))
        for (name, event) in CodecSamples.events {
            XCTAssertEqual(event.packet.payload.hex, Self.eventPackets[name], name)
            XCTAssertEqual(try HCIEvent(HCIPacket(type: .event, payload: Self.bytes(Self.eventPackets[name] ?? ""))), event, name)
        }
    }

    private static func decodes<C: HCICommand>(_ command: C, from hex: String) throws -> Bool {
        try C(packet: HCIPacket(type: .command, payload: bytes(hex))) == command
    }

    private static func decodes<R: HCIReturnParameters>(_ value: R, from hex: String) throws -> Bool {
        try R(returnParameters: ArraySlice(bytes(hex))) == value
    }

    static func bytes(_ hex: String) -> [UInt8] {
        var bytes = [UInt8]()
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            bytes.append(UInt8(hex[index ..< next], radix: 16)!)
            index = next
        }
        return bytes
    }
}
