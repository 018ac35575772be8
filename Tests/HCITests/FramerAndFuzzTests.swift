import SplitMix
import XCTest
@testable import HCI

final class FramerAndFuzzTests: XCTestCase {
    /// A varied stream of valid packets, built by encoding events and commands.
    private func samplePackets(count: Int, random: inout SplitMix64) -> [HCIPacket] {
        var packets = [HCIPacket]()
        for index in 0 ..< count {
            switch index % 5 {
            case 0:
                packets.append(HCIEvent.commandComplete(HCICommandComplete(opcode: .reset, returnParameters: [0])).packet)
            case 1:
                let reports = (0 ..< Int.random(in: 1 ... 3, using: &random)).map { _ in
                    LEAdvertisingReport(properties: [.legacy, .connectable, .scannable], addressType: .randomDevice,
                                        address: BluetoothAddress(rawValue: random.next()), rssi: Int8.random(in: -100 ... -30, using: &random),
                                        data: ArraySlice(random.bytes(Int.random(in: 0 ... 31, using: &random))))
                }
                packets.append(HCIEvent.leMeta(.advertisingReport(reports)).packet)
            case 2:
                packets.append(LESetScanParametersCommand(scanType: .passive, interval: 16, window: 16).packet)
            case 3:
                let length = Int.random(in: 0 ... 300, using: &random)
                packets.append(HCIPacket(type: .acl, payload: [0x01, 0x20, UInt8(length & 0xFF), UInt8(length >> 8)] + random.bytes(length)))
            default:
                packets.append(HCIEvent.leMeta(.extendedAdvertisingReport([LEAdvertisingReport(
                    properties: [.connectable], addressType: .publicDevice, address: BluetoothAddress(rawValue: random.next()),
                    sid: 1, rssi: -50, data: ArraySlice(random.bytes(Int.random(in: 0 ... 200, using: &random)))
                )])).packet)
            }
        }
        return packets
    }

    private func frame(_ stream: [UInt8], chunks: (inout SplitMix64) -> Int, random: inout SplitMix64) -> [HCIPacket] {
        var framer = H4Framer()
        var out = [HCIPacket]()
        var index = 0
        while index < stream.count {
            let size = min(max(1, chunks(&random)), stream.count - index)
            framer.append(stream[index ..< index + size])
            index += size
            while let packet = try? framer.nextPacket() { out.append(packet) }
        }
        return out
    }

    func testFramerGivesIdenticalPacketsForAnySplit() {
        var random = SplitMix64(seed: 42)
        let packets = samplePackets(count: 500, random: &random)
        let stream = packets.flatMap(\.h4Bytes)
        XCTAssertEqual(frame(stream, chunks: { _ in stream.count }, random: &random), packets, "whole")
        XCTAssertEqual(frame(stream, chunks: { _ in 1 }, random: &random), packets, "byte at a time")
        XCTAssertEqual(frame(stream, chunks: { Int.random(in: 1 ... 700, using: &$0) }, random: &random), packets, "random chunks")
        for packet in packets where packet.type == .event {
            XCTAssertNoThrow(try HCIEvent(packet))
        }
    }

    /// 100,000 random and mutated packets through framer and decoder: typed errors
    /// only, and the framer's buffer stays bounded.
    func testRandomAndMutatedInputNeverTrapsAndStaysBounded() {
        var random = SplitMix64(seed: 0xB1E)
        let valid = samplePackets(count: 200, random: &random).filter { $0.type == .event }
        var framer = H4Framer()
        var decoded = 0
        var rejected = 0
        var framingErrors = 0
        var maximumBuffered = 0
        for round in 0 ..< 100_000 {
            var bytes: [UInt8]
            switch round % 4 {
            case 0:
                bytes = random.bytes(Int.random(in: 0 ... 64, using: &random))
            case 1:
                // A valid event with bytes flipped.
                bytes = valid[Int.random(in: 0 ..< valid.count, using: &random)].h4Bytes
                for _ in 0 ..< Int.random(in: 1 ... 4, using: &random) {
                    bytes[Int.random(in: 0 ..< bytes.count, using: &random)] = UInt8.random(in: 0 ... 255, using: &random)
                }
            case 2:
                // Truncated, with the header left claiming the full length.
                bytes = valid[Int.random(in: 0 ..< valid.count, using: &random)].h4Bytes
                bytes.removeLast(Int.random(in: 0 ..< bytes.count, using: &random))
            default:
                // Header and parameters made up: an LE advertising report with a random count and lengths.
                let body = [0x02, UInt8.random(in: 0 ... 255, using: &random)] + random.bytes(Int.random(in: 0 ... 80, using: &random))
                bytes = [0x04, 0x3E, UInt8(body.count)] + body
            }
            // Also decode the mangled bytes directly as an event, whatever the framer makes of them.
            if bytes.count >= 1 {
                let direct = HCIPacket(type: .event, payload: Array(bytes.dropFirst()))
                if (try? HCIEvent(direct)) != nil { decoded += 1 } else { rejected += 1 }
            }
            framer.append(bytes)
            while true {
                do {
                    guard let packet = try framer.nextPacket() else { break }
                    if packet.type == .event {
                        if (try? HCIEvent(packet)) != nil { decoded += 1 } else { rejected += 1 }
                    }
                } catch {
                    framingErrors += 1
                }
            }
            maximumBuffered = max(maximumBuffered, framer.bufferedByteCount)
        }
        XCTAssertGreaterThan(decoded, 0)
        XCTAssertGreaterThan(rejected, 0)
        XCTAssertGreaterThan(framingErrors, 0)
        // Never more than one maximal packet plus one appended chunk waits in the framer.
        XCTAssertLessThanOrEqual(maximumBuffered, 5 + framer.maximumPayloadLength + 300)
    }

    /// Offering in place gives the very packets `nextPacket` gives, under any split: taken
    /// ones in order, a declined one next as a packet.
    func testOfferingInPlaceGivesTheSamePackets() {
        var random = SplitMix64(seed: 7)
        let packets = samplePackets(count: 500, random: &random)
        let stream = packets.flatMap(\.h4Bytes)
        for chunk in [stream.count, 1, 37] {
            var framer = H4Framer()
            var taken: [HCIPacket] = []
            var framed: [HCIPacket] = []
            var index = 0
            while index < stream.count {
                let size = min(chunk, stream.count - index)
                framer.append(stream[index ..< index + size])
                index += size
                while true {
                    // Events are taken in place; anything else is declined and framed.
                    let offer = try? framer.offerNextPacket { type, payload in
                        guard type == .event else { return false }
                        taken.append(HCIPacket(type: type, payload: Array(payload)))
                        return true
                    }
                    if offer == .taken { continue }
                    guard offer == .declined, let packet = try? framer.nextPacket() else { break }
                    framed.append(packet)
                }
            }
            XCTAssertEqual(taken + framed, packets.filter { $0.type == .event } + packets.filter { $0.type != .event }, "chunks of \(chunk)")
            XCTAssertEqual(taken.count, packets.filter { $0.type == .event }.count)
            XCTAssertEqual(framer.bufferedByteCount, 0)
        }
    }
}
