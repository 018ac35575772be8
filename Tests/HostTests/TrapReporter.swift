#if canImport(Glibc)
import Glibc
#endif

/// A trap (overflow, index out of range) in product code kills the test process before any
/// assertion can name the case: this prints the running case's seed on the way down, so
/// BEACON_GATEWAY_FUZZ_REPLAY can replay it. Swift traps raise SIGILL on x86_64 and SIGTRAP
/// on aarch64.
enum TrapReporter {
    nonisolated(unsafe) static var seed: UInt64 = 0
    /// Who is reporting: the first words of the line.
    nonisolated(unsafe) static var fuzzer = "GATT fuzz"
    private static let signals = [SIGILL, SIGTRAP]
    /// What was there before `install()` (the Swift runtime's backtracer, perhaps), put
    /// back whole by `uninstall()`: a later test's trap still gets its backtrace.
    nonisolated(unsafe) private static var previous: [Int32: sigaction] = [:]

    static func install() {
        for number in signals {
            var old = sigaction()
            if sigaction(number, nil, &old) == 0 { previous[number] = old }
            signal(number) { number in
                // Not async-signal-safe (it allocates), but the process is dying anyway and
                // the seed is all that matters.
                var seed = TrapReporter.seed
                var digits = [UInt8]()
                for _ in 0 ..< 16 {
                    digits.insert(Array("0123456789abcdef".utf8)[Int(seed & 0xF)], at: 0)
                    seed >>= 4
                }
                let line = Array("\n\(TrapReporter.fuzzer): trap in the case with seed 0x".utf8) + digits + [0x0A]
                _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
                signal(number, SIG_DFL)
                raise(number)
            }
        }
    }

    static func uninstall() {
        for number in signals {
            if var old = previous.removeValue(forKey: number) {
                _ = sigaction(number, &old, nil)
            } else {
                signal(number, SIG_DFL)
            }
        }
    }
}
