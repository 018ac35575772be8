// Advertising frames, hex literals and a seeded generator that the Advertisements,
// PresenceProof, GatewayCore and Presentation tests share (test targets cannot depend on
// one another).

/// Bytes from hex text; spaces ignored. Test data only, so a bad literal stops the run.
public func bytes(_ text: String) -> [UInt8] {
    let digits = Array(text.utf8.filter { $0 != UInt8(ascii: " ") })
    precondition(digits.count % 2 == 0, "odd number of hex digits in \(text)")
    return stride(from: 0, to: digits.count, by: 2).map { offset in
        guard let byte = UInt8(String(decoding: digits[offset ..< offset + 2], as: UTF8.self), radix: 16) else {
            preconditionFailure("bad hex literal \(text)")
        }
        return byte
    }
}


public enum Frames {
    /// An iBeacon as a typical tag sends it (flags 0x1A, Apple manufacturer data).
    public static let iBeacon = "02011a 1aff4c000215 e2c56db5dffb48d2b060d0f5a71096e0 0064 0001 c5"
    /// Eddystone-UID with the namespace/instance of the Eddystone spec's examples.
    public static let eddystoneUID = "020106 0303aafe 1716aafe00e8 edd1ebeac04e5defa017 0123456789ab 0000"
    /// Eddystone-URL for https://www.google.com/ (scheme 0x01, expansion 0x00).
    public static let eddystoneURL = "020106 0303aafe 0d16aafe10eb01 676f6f676c65 00"
    /// Eddystone-TLM: 3000 mV, 23.0 °C, 256 PDUs, 10.0 s.
    public static let eddystoneTLM = "020106 0303aafe 1116aafe2000 0bb8 1700 00000100 00000064"
    /// Apple Continuity "nearby info" (type 0x10) with a TX power level.
    public static let appleContinuity = "02011a 020a0c 0aff4c00 1005 03180c4c38"
    /// Microsoft Swift Pair: beacon id 0x03, sub-scenario 0x00, reserved RSSI, name "Mouse".
    public static let microsoftSwiftPair = "020106 0bff0600 030080 4d6f757365"
    /// Microsoft CDP beacon (scenario 0x01), as Windows PCs send.
    public static let microsoftCDP = "1eff0600 01092002 3a7d2f51c0e4b6189f2acd07e1335b7a0c6e2f94d8a1b3"
    /// Nordic UART service (128-bit UUID list) and complete local name "Nordic".
    public static let nordicUART = "020106 1107 9ecadc240ee5a9e093f3a3b50100406e 0709 4e6f72646963"
    /// Battery and device information services (16-bit list) and battery service data 90 %.
    public static let batteryService = "020106 05030f180a18 04160f185a 0508 54616731"
}
