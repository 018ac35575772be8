import SecurityManager

/// The lines the installer reads while a window is open, the same standalone and through
/// the running agent (docs/cli.md, `enroll`).
public enum EnrolmentProgress {
    public static func windowOpened(seconds: Int64, name: String, method: PairingMethod) -> String {
        "open for \(seconds) s: on the phone, open Bluetooth settings and pair with \"\(name)\" ("
            + (method == .numericComparison ? "compare the six digits"
                : "Just Works: no digits to compare, the first phone to pair is enrolled") + ")"
    }

    public static func phoneConnected(_ address: String) -> String {
        "a phone connected (\(address)); pairing"
    }

    /// The question for a Numeric Comparison value: always six digits.
    public static func compareQuestion(_ value: UInt32) -> String {
        let digits = String(value)
        return "does the phone show " + String(repeating: "0", count: max(0, 6 - digits.count)) + digits + "? [y/N] "
    }
}
