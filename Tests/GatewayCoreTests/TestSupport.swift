import XCTest
@testable import GatewayCore

/// Bytes from hex text; spaces ignored. Test data only, so a bad literal fails loudly.
func bytes(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> [UInt8] {
    let digits = Array(text.utf8.filter { $0 != UInt8(ascii: " ") })
    guard digits.count % 2 == 0, let parsed = TagIdentity.parseHex(Substring(String(decoding: digits, as: UTF8.self)), byteCount: digits.count / 2) else {
        XCTFail("bad hex literal \(text)", file: file, line: line)
        return []
    }
    return parsed
}

/// SplitMix64: a tiny seeded generator so fuzz runs are reproducible.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

enum Frames {
    /// An iBeacon as a typical tag sends it (flags 0x1A, Apple manufacturer data).
    static let iBeacon = "02011a 1aff4c000215 e2c56db5dffb48d2b060d0f5a71096e0 0064 0001 c5"
    /// Eddystone-UID with the namespace/instance of the Eddystone spec's examples.
    static let eddystoneUID = "020106 0303aafe 1716aafe00e8 edd1ebeac04e5defa017 0123456789ab 0000"
    /// Eddystone-URL for https://www.google.com/ (scheme 0x01, expansion 0x00).
    static let eddystoneURL = "020106 0303aafe 0d16aafe10eb01 676f6f676c65 00"
    /// Eddystone-TLM: 3000 mV, 23.0 °C, 256 PDUs, 10.0 s.
    static let eddystoneTLM = "020106 0303aafe 1116aafe2000 0bb8 1700 00000100 00000064"
    /// Apple Continuity "nearby info" (type 0x10) with a TX power level.
    static let appleContinuity = "02011a 020a0c 0aff4c00 1005 03180c4c38"
    /// Microsoft Swift Pair: beacon id 0x03, sub-scenario 0x00, reserved RSSI, name "Mouse".
    static let microsoftSwiftPair = "020106 0bff0600 030080 4d6f757365"
    /// Microsoft CDP beacon (scenario 0x01), as Windows PCs send.
    static let microsoftCDP = "1eff0600 01092002 3a7d2f51c0e4b6189f2acd07e1335b7a0c6e2f94d8a1b3"
    /// Nordic UART service (128-bit UUID list) and complete local name "Nordic".
    static let nordicUART = "020106 1107 9ecadc240ee5a9e093f3a3b50100406e 0709 4e6f72646963"
    /// Battery and device information services (16-bit list) and battery service data 90 %.
    static let batteryService = "020106 05030f180a18 04160f185a 0508 54616731"
}
