import EventLoop
import SplitMix
import XCTest
@testable import Host

/// Hostile centrals against the GATT server (docs/gatt-server.md, "How it is tested"):
/// random databases; well-formed requests of every kind mixed with mutated, truncated,
/// extended and random PDUs, floods, Exchange MTU at any moment, the link getting
/// encrypted midway, time jumps, and the application writing, notifying and indicating
/// at random. Nothing may trap; each input gets at most one PDU back, a command none; every
/// PDU sent is well formed, within ATT_MTU and answers the request it follows; nothing is
/// sent once the bearer is closed; and no byte run of a value that needs encryption (or
/// authentication) leaves on a link without it. `swift test` runs 2,000 cases;
/// BEACON_GATEWAY_FUZZ_CASES and BEACON_GATEWAY_FUZZ_SEED set more and another seed;
/// `scripts/fuzz-gatt-server` runs 10^6 optimised.
final class GATTServerRobustnessTests: XCTestCase {
    func testHostileCentralsNeverBreakTheServer() {
        let environment = ProcessInfo.processInfo.environment
        let seed = environment["BEACON_GATEWAY_FUZZ_SEED"].flatMap { UInt64($0) } ?? 0x6A77_5E7F
        let cases = environment["BEACON_GATEWAY_FUZZ_CASES"].flatMap { Int($0) } ?? 2000
        var seeds = SplitMix64(seed: seed)
        var tally = HostileCentral.Tally()
        TrapReporter.fuzzer = "GATT server fuzz"
        TrapReporter.install()
        defer { TrapReporter.uninstall() }
        var findings = 0
        for index in 0 ..< cases {
            let caseSeed = seeds.next()
            TrapReporter.seed = caseSeed
            var central = HostileCentral(seed: caseSeed)
            if let finding = central.run(tally: &tally) {
                findings += 1
                XCTFail("case \(index) (seed \(caseSeed)): \(finding)")
                if findings >= 20 { break }
            }
        }
        print("GATT server robustness: \(cases) cases, seed \(seed), \(findings) findings, \(tally.inputs) PDUs and calls")
        print("  endings: \(tally.endings.sorted { $0.key < $1.key })")
        print("  answers: \(tally.answers.sorted { $0.key < $1.key }.map { "0x" + String($0.key, radix: 16) + ": \($0.value)" })")
        print("  errors: \(tally.errors.sorted { $0.key < $1.key }.map { "0x" + String($0.key, radix: 16) + ": \($0.value)" })")
        guard cases >= 2000 else { return }
        // The mix reaches every answer and every error the server gives.
        for opcode: UInt8 in [0x01, 0x03, 0x05, 0x07, 0x09, 0x0B, 0x0D, 0x0F, 0x11, 0x13, 0x1B, 0x1D, 0x1E] {
            XCTAssertGreaterThan(tally.answers[opcode, default: 0], 0, "never sent 0x" + String(opcode, radix: 16))
        }
        for code: UInt8 in [0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x0A, 0x0D, 0x0E, 0x0F, 0x10, 0xFD] {
            XCTAssertGreaterThan(tally.errors[code, default: 0], 0, "never answered error 0x" + String(code, radix: 16))
        }
        for ending in ["flooded", "indication not confirmed", "open"] {
            XCTAssertGreaterThan(tally.endings[ending, default: 0], 0, "no case ended \(ending)")
        }
    }
}

/// One hostile central against one server; `run` returns the first broken rule.
struct HostileCentral {
    struct Tally {
        var inputs = 0
        var endings: [String: Int] = [:]
        var answers: [UInt8: Int] = [:]
        var errors: [UInt8: Int] = [:]
    }

    /// Values that need encryption repeat the first pattern, those that need
    /// authentication the second; every other value is drawn from bytes below 0x80.
    static let encryptedPattern: [UInt8] = [0xC4, 0xFA, 0x91, 0xE5, 0xDE, 0xC2, 0xE7, 0xB0]
    static let authenticatedPattern: [UInt8] = [0xA7, 0xD3, 0xF0, 0x8C, 0xB5, 0x9E, 0xE1, 0xCA]

    private var random: SplitMix64
    private var server: GATTServer
    private var security = ATTLinkSecurity.unencrypted
    private var now = Instant.zero
    private var closed = false

    init(seed: UInt64) {
        random = SplitMix64(seed: seed)
        let database = random.next() % 4 == 0 ? ServerFixture.enrolment : Self.randomDatabase(&random)
        let mtu = [23, 23, 64, 185, 517][Int(random.next() % 5)]
        server = GATTServer(database: database, configuration: .init(mtu: mtu, requestBurst: 16 + Int(random.next() % 64)))
    }

    mutating func run(tally: inout Tally) -> String? {
        let steps = 10 + Int(random.next() % 40)
        let hostility = Int(random.next() % 100)
        let floods = random.next() % 8 == 0
        for _ in 0 ..< steps {
            tally.inputs += 1
            let roll = Int(random.next() % 100)
            if roll < 70 {
                var pdu = genuineRequest()
                if Int(random.next() % 100) < hostility { pdu = mutated(pdu) }
                if let finding = feed(pdu, tally: &tally) { return finding }
            } else if roll < 74 {
                if let finding = feed(random.bytes(Int(random.next() % 40)), tally: &tally) { return finding }
            } else if roll < 76, floods {
                // A flood: requests back to back at one instant.
                for _ in 0 ..< 20 + Int(random.next() % 120) {
                    if let finding = feed([0x0A, 0x01, 0x00], waiting: false, tally: &tally) { return finding }
                }
            } else if roll < 80 {
                // The link gets encrypted (never less so within a connection).
                let level = ATTLinkSecurity.Level(rawValue: max(security.level.rawValue, Int(random.next() % 3))) ?? .unencrypted
                security = ATTLinkSecurity(level: level, peerHasLongTermKey: random.next() % 4 == 0)
            } else if roll < 86 {
                now += .milliseconds(Int64(random.next() % (random.next() % 4 == 0 ? 40_000 : 50)))
                if let finding = check(server.timerFired(now: now), answering: nil, tally: &tally) { return finding }
            } else if roll < 90 {
                let error: ATTErrorCode? = random.next() % 2 == 0 ? nil : ATTErrorCode(rawValue: UInt8(random.next() % 0x14))
                if let finding = check(server.completeWrite(error: error), answering: nil, tally: &tally) { return finding }
            } else {
                if let finding = update(tally: &tally) { return finding }
            }
        }
        let ending = switch server.closeReason {
        case .flooded?: "flooded"
        case .indicationNotConfirmed?: "indication not confirmed"
        case .linkClosed?: "link closed"
        case nil: "open"
        }
        tally.endings[ending, default: 0] += 1
        return nil
    }

    // MARK: Rules

    private mutating func feed(_ pdu: [UInt8], waiting: Bool = true, tally: inout Tally) -> String? {
        if waiting { now += .microseconds(Int64(random.next() % 8_000)) }
        let actions = server.receive(pdu, security: security, now: now)
        return check(actions, answering: pdu, tally: &tally)
    }

    private mutating func check(_ actions: [GATTServer.Action], answering input: [UInt8]?, tally: inout Tally) -> String? {
        let sent = actions.compactMap { if case .send(let bytes) = $0 { bytes } else { nil } }
        if actions.contains(where: { if case .close = $0 { true } else { false } }) {
            guard server.isClosed, sent.isEmpty else { return "closed with more to say: \(actions)" }
            closed = true
            return nil
        }
        guard sent.count <= 1 else { return "\(sent.count) PDUs for one input: \(sent)" }
        guard let pdu = sent.first else { return nil }
        if closed { return "sent after the bearer closed: \(pdu)" }
        guard !pdu.isEmpty, pdu.count <= server.mtu else { return "\(pdu.count)-byte PDU with ATT_MTU \(server.mtu)" }
        if let input {
            guard let opcode = input.first.map(ATTOpcode.init(rawValue:)), !opcode.isCommand else { return "an answer to a command \(input): \(pdu)" }
            let expected: Set<UInt8> = opcode == .handleValueIndication ? [0x1E] : [0x01, opcode.rawValue &+ 1]
            guard expected.contains(pdu[0]) else { return "answer \(pdu) to \(input)" }
            if pdu[0] == 0x01, pdu.count == 5, pdu[1] != opcode.rawValue { return "error response for another request: \(pdu) to \(input)" }
        }
        if let problem = Self.malformation(pdu) { return "malformed \(pdu): \(problem)" }
        if let leak = leak(in: pdu) { return "\(leak) on a link \(security): \(pdu)" }
        tally.answers[pdu[0], default: 0] += 1
        if pdu[0] == 0x01 { tally.errors[pdu[4], default: 0] += 1 }
        return nil
    }

    /// What is wrong with the shape of a PDU the server sent, if anything.
    static func malformation(_ pdu: [UInt8]) -> String? {
        let count = pdu.count
        func entries(_ header: Int, _ size: Int) -> Bool { size > 0 && count > header && (count - header) % size == 0 }
        switch pdu[0] {
        case 0x01: return count == 5 ? nil : "error response length"
        case 0x03: return count == 3 ? nil : "MTU response length"
        case 0x05: return count >= 2 && (pdu[1] == 1 && entries(2, 4) || pdu[1] == 2 && entries(2, 18)) ? nil : "find information entries"
        case 0x07:
            guard entries(1, 4) else { return "find by type value entries" }
            for at in stride(from: 1, to: count, by: 4) where UInt16(pdu[at]) | UInt16(pdu[at + 1]) << 8 > UInt16(pdu[at + 2]) | UInt16(pdu[at + 3]) << 8 {
                return "group end before its handle"
            }
            return nil
        case 0x09: return count >= 2 && pdu[1] >= 2 && entries(2, Int(pdu[1])) ? nil : "read by type entries"
        case 0x11: return count >= 2 && pdu[1] >= 4 && entries(2, Int(pdu[1])) ? nil : "read by group type entries"
        case 0x0B, 0x0D, 0x0F: return nil
        case 0x13, 0x1E: return count == 1 ? nil : "length"
        case 0x1B, 0x1D: return count >= 3 ? nil : "handle value length"
        default: return "opcode a server never sends"
        }
    }

    /// A run of a protected value's pattern that this link may not see.
    private func leak(in pdu: [UInt8]) -> String? {
        var forbidden = [(String, [UInt8])]()
        if security.level < .encrypted { forbidden.append(("an encrypted value", Self.encryptedPattern)) }
        if security.level < .authenticated { forbidden.append(("an authenticated value", Self.authenticatedPattern)) }
        for (what, pattern) in forbidden where pdu.count >= 4 {
            // Any 4 consecutive bytes of the repeated pattern (none of them below 0x80).
            for start in 0 ... pdu.count - 4 {
                guard let phase = pattern.firstIndex(of: pdu[start]) else { continue }
                if (1 ..< 4).allSatisfy({ pdu[start + $0] == pattern[(phase + $0) % pattern.count] }) { return what }
            }
        }
        return nil
    }

    // MARK: Inputs

    private mutating func handle() -> UInt16 {
        let last = server.database.lastHandle
        return switch random.next() % 10 {
        case 0: 0
        case 1: 0xFFFF
        case 2: UInt16(truncatingIfNeeded: random.next())
        default: UInt16(1 + random.next() % UInt64(Int(last) + 2))
        }
    }

    /// A random handle of an attribute that `matches`, if there is one.
    private mutating func someHandle(_ matches: (GATTAttribute) -> Bool) -> UInt16? {
        let candidates = server.database.attributes.filter(matches)
        return candidates.isEmpty ? nil : candidates[Int(random.next() % UInt64(candidates.count))].handle
    }

    private mutating func le(_ value: UInt16) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8)] }

    private mutating func someType() -> [UInt8] {
        let attributes = server.database.attributes
        switch random.next() % 6 {
        case 0: return [0x00, 0x28]
        case 1: return [0x03, 0x28]
        case 2: return [0x01, 0x28]
        case 3: return random.bytes(random.next() % 2 == 0 ? 2 : 16)
        default:
            guard !attributes.isEmpty else { return [0x02, 0x29] }
            let type = attributes[Int(random.next() % UInt64(attributes.count))].type
            return random.next() % 4 == 0 ? type.bytes.reversed() : type.attBytes
        }
    }

    /// A request or command of every kind ATT has, well formed, on handles mostly in the database.
    private mutating func genuineRequest() -> [UInt8] {
        let start = handle()
        let end = random.next() % 3 == 0 ? handle() : 0xFFFF
        switch random.next() % 14 {
        case 0: return [0x02] + le(UInt16(truncatingIfNeeded: random.next() % 3 == 0 ? random.next() : random.next() % 600))
        case 1: return [0x04] + le(start) + le(end)
        case 2:
            let type = random.next() % 2 == 0 ? [0x00, 0x28] : Array(someType().prefix(2))
            let value: [UInt8] = random.next() % 2 == 0 ? storedValue(of: handle()) : random.bytes(Int(random.next() % 4))
            return [0x06] + le(start) + le(end) + type + value.prefix(16)
        case 3: return [0x08] + le(start) + le(end) + someType()
        case 4: return [0x10] + le(start) + le(end) + (random.next() % 4 == 0 ? someType() : [0x00, 0x28])
        case 5, 6: return [0x0A] + le(start)
        case 7: return [0x0C] + le(start) + le(UInt16(random.next() % 60))
        case 8: return [0x0E] + (0 ..< 1 + random.next() % 4).flatMap { _ in le(handle()) }
        case 9: return [0x12] + le(start) + writeValue(for: start)
        case 10: return [0x52] + le(start) + writeValue(for: start)
        case 11: return [0x1E]
        case 12: return [0x12] + le(someHandle { if case .clientConfiguration = $0.kind { true } else { false } } ?? start) + [UInt8(random.next() % 4), 0]
        default:
            return [[0x16] + le(start) + [0, 0, 1], [0x18, 0x01], [0x20] + le(start) + le(start), [0x1D] + le(start) + [1],
                    [0x1B] + le(start), [0xD2] + le(start) + random.bytes(13), [UInt8(truncatingIfNeeded: random.next())]][Int(random.next() % 7)]
        }
    }

    private mutating func writeValue(for handle: UInt16) -> [UInt8] {
        if case .clientConfiguration? = server.database.attribute(handle)?.kind, random.next() % 2 == 0 {
            return [UInt8(random.next() % 4), 0]
        }
        return random.bytes(Int(random.next() % 24)).map { $0 & 0x7F }
    }

    private func storedValue(of handle: UInt16) -> [UInt8] {
        switch server.database.attribute(handle)?.kind {
        case .value(.fixed(let bytes), _, _, _)?, .descriptor(let bytes)?, .service(_, let bytes)?: bytes
        default: []
        }
    }

    private mutating func mutated(_ pdu: [UInt8]) -> [UInt8] {
        var pdu = pdu
        switch random.next() % 4 {
        case 0:
            let bit = Int(random.next() % UInt64(pdu.count * 8))
            pdu[bit / 8] ^= 1 << UInt8(bit % 8)
        case 1:
            pdu.removeLast(Int(random.next() % UInt64(pdu.count)) + 1)
        case 2:
            pdu.append(contentsOf: random.bytes(Int(random.next() % (random.next() % 8 == 0 ? 600 : 4)) + 1))
        default:
            pdu[0] = UInt8(truncatingIfNeeded: random.next())
        }
        return pdu
    }

    /// The application: notify, indicate or set a value, on any handle.
    private mutating func update(tally: inout Tally) -> String? {
        let updatable = someHandle { if case .value(_, let properties, _, _) = $0.kind { !properties.isDisjoint(with: [.notify, .indicate]) } else { false } }
        let target = random.next() % 4 == 0 ? handle() : updatable ?? handle()
        let requirement: GATTSecurityRequirement = if case .value(_, _, let security, _)? = server.database.attribute(target)?.kind {
            security
        } else {
            .none
        }
        let value = Self.value(for: requirement, count: Int(random.next() % 40), &random)
        let actions: [GATTServer.Action]
        do {
            switch random.next() % 3 {
            case 0: actions = try server.notify(handle: target, value: value, security: security)
            case 1:
                actions = try server.indicate(handle: target, value: value, security: security, now: now)
                // Some centrals never confirm.
                if random.next() % 3 == 0 { now += .seconds(31) }
            default:
                try server.setValue(random.next() % 5 == 0 ? .unavailable(.unlikelyError) : .bytes(value), at: target)
                actions = []
            }
        } catch {
            return nil
        }
        if closed, !actions.isEmpty { return "updates after the bearer closed: \(actions)" }
        return check(actions, answering: nil, tally: &tally)
    }

    // MARK: Databases

    static func value(for requirement: GATTSecurityRequirement, count: Int, _ random: inout SplitMix64) -> [UInt8] {
        switch requirement {
        case .none: random.bytes(count).map { $0 & 0x7F }
        case .encryption: (0 ..< max(4, count)).map { encryptedPattern[$0 % encryptedPattern.count] }
        case .authentication: (0 ..< max(4, count)).map { authenticatedPattern[$0 % authenticatedPattern.count] }
        }
    }

    static func randomDatabase(_ random: inout SplitMix64) -> GATTDatabase {
        var services = [GATTServiceDefinition]()
        for _ in 0 ..< 1 + random.next() % 4 {
            var characteristics = [GATTCharacteristicDefinition]()
            for _ in 0 ..< random.next() % 5 {
                let requirement = GATTSecurityRequirement(rawValue: Int(random.next() % 3)) ?? .none
                let value = Self.value(for: requirement, count: Int(random.next() % 40), &random)
                let source: GATTValue = switch random.next() % 3 {
                case 0: .fixed(value)
                case 1: .variable(initial: .unavailable(.unlikelyError), maxLength: Int(random.next() % 64))
                default: .variable(initial: .bytes(value), maxLength: value.count + Int(random.next() % 8))
                }
                let descriptors = (0 ..< random.next() % 3).map { _ in
                    GATTDescriptorDefinition(uuid: GATTUUID(uuid16: 0x2901 + UInt16(random.next() % 4)),
                                             value: Self.value(for: requirement, count: Int(random.next() % 12), &random))
                }
                characteristics.append(GATTCharacteristicDefinition(
                    uuid: randomUUID(&random), properties: GATTCharacteristicProperties(rawValue: UInt8(random.next() % 64) & 0x3E),
                    security: requirement, value: source, descriptors: descriptors
                ))
            }
            services.append(GATTServiceDefinition(uuid: randomUUID(&random), isPrimary: random.next() % 4 != 0, characteristics: characteristics))
        }
        return (try? GATTDatabase(services: services)) ?? ServerFixture.enrolment
    }

    private static func randomUUID(_ random: inout SplitMix64) -> GATTUUID {
        random.next() % 2 == 0 ? GATTUUID(uuid16: 0x3000 + UInt16(random.next() % 0x100)) : GATTUUID(bytes: random.bytes(16).map { $0 & 0x7F })!
    }
}
