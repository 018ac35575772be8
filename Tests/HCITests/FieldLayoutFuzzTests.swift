import SplitMix
import XCTest
@testable import HCI

/// Every command, return parameters and event described by field lists, through the
/// one generic path: round trips, every truncation, and random and mutated bytes.
final class FieldLayoutFuzzTests: XCTestCase {
    func testEveryDescribedTypeRoundTripsAndRejectsEveryTruncation() throws {
        for (name, command) in CodecSamples.commands + CodecSamples.newerCommands {
            try Self.checkCommand(command, name: name)
        }
        for (name, value) in CodecSamples.returnParameters + CodecSamples.newerReturnParameters {
            try Self.checkReturnParameters(value, name: name)
        }
        for (name, event) in CodecSamples.events + CodecSamples.newerEvents {
            let payload = event.packet.payload
            XCTAssertEqual(try HCIEvent(code: EventCode(rawValue: payload[0]), parameters: payload[2...]), event, name)
        }
    }

    func testRandomAndMutatedParametersDecodeToTypedErrorsOrStableValues() throws {
        var random = SplitMix64(seed: 0xF1E1D)
        for (name, command) in CodecSamples.commands + CodecSamples.newerCommands {
            try Self.fuzzCommand(command, name: name, random: &random)
        }
        for (name, value) in CodecSamples.returnParameters + CodecSamples.newerReturnParameters {
            try Self.fuzzReturnParameters(value, name: name, random: &random)
        }
        for (name, event) in CodecSamples.events + CodecSamples.newerEvents {
            let valid = Array(event.packet.payload[2...])
            let code = EventCode(rawValue: event.packet.payload[0])
            for round in 0 ..< 500 {
                let bytes = Self.mangled(valid, round: round, random: &random)
                guard let decoded = try? HCIEvent(code: code, parameters: ArraySlice(bytes)) else { continue }
                let again = decoded.packet.payload
                XCTAssertEqual(try HCIEvent(code: code, parameters: again[2...]), decoded, "\(name) \(bytes.hex)")
            }
        }
    }

    func testConnectionUpdateHasTheLayoutTheAgentBuiltByHand() {
        let command = LEConnectionUpdateCommand(connectionHandle: 0x0040, connection: LEConnectionParameters(
            intervalMin: 0x0018, intervalMax: 0x0028, maxLatency: 0, supervisionTimeout: 0x01F4, minCELength: 0, maxCELength: 0))
        XCTAssertEqual(command.packet.payload.hex, "13200e" + "4000" + "1800" + "2800" + "0000" + "f401" + "0000" + "0000")
        XCTAssertEqual(LEConnectionUpdateCommand.expectedResponse, .commandStatus)
    }

    /// A valid parameter block, cut, extended, or with bytes overwritten.
    private static func mangled(_ valid: [UInt8], round: Int, random: inout SplitMix64) -> [UInt8] {
        var bytes = valid
        switch round % 4 {
        case 0:
            bytes = random.bytes(Int.random(in: 0 ... valid.count + 8, using: &random))
        case 1 where !bytes.isEmpty:
            for _ in 0 ..< Int.random(in: 1 ... 4, using: &random) {
                bytes[Int.random(in: 0 ..< bytes.count, using: &random)] = UInt8.random(in: 0 ... 255, using: &random)
            }
        case 2:
            bytes.removeLast(Int.random(in: 0 ... bytes.count, using: &random))
        default:
            bytes += random.bytes(Int.random(in: 1 ... 8, using: &random))
        }
        return bytes
    }

    private static func checkCommand<C: HCICommand>(_ command: C, name: String) throws {
        let packet = command.packet
        XCTAssertEqual(C.opcode.expectedResponse, C.expectedResponse, name)
        XCTAssertEqual(try C(packet: packet), command, name)
        let parameters = packet.payload[3...]
        for cut in 0 ..< parameters.count {
            XCTAssertThrowsError(try C(parameters: parameters.prefix(cut)), "\(name) cut to \(cut)")
        }
        if !parameters.isEmpty, C.self is any HCIFieldLayout.Type {
            XCTAssertThrowsError(try C(parameters: parameters + [0]), "\(name) with a byte too many")
        }
    }

    private static func checkReturnParameters<R: HCIReturnParameters>(_ value: R, name: String) throws {
        let bytes = ArraySlice(value.encoded)
        XCTAssertEqual(try R(returnParameters: bytes), value, name)
        XCTAssertEqual(try R(returnParameters: bytes + [0xAA]), value, "\(name): later versions may append fields")
        for cut in 0 ..< bytes.count {
            XCTAssertThrowsError(try R(returnParameters: bytes.prefix(cut)), "\(name) cut to \(cut)")
        }
    }

    private static func fuzzCommand<C: HCICommand>(_ command: C, name: String, random: inout SplitMix64) throws {
        let valid = Array(command.packet.payload[3...])
        for round in 0 ..< 500 {
            let bytes = mangled(valid, round: round, random: &random)
            guard let decoded = try? C(parameters: ArraySlice(bytes)) else { continue }
            XCTAssertEqual(try C(packet: decoded.packet), decoded, "\(name) \(bytes.hex)")
        }
    }

    private static func fuzzReturnParameters<R: HCIReturnParameters>(_ value: R, name: String, random: inout SplitMix64) throws {
        let valid = value.encoded
        for round in 0 ..< 500 {
            let bytes = mangled(valid, round: round, random: &random)
            guard let decoded = try? R(returnParameters: ArraySlice(bytes)) else { continue }
            XCTAssertEqual(try R(returnParameters: ArraySlice(decoded.encoded)), decoded, "\(name) \(bytes.hex)")
        }
    }
}
