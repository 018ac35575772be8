#if canImport(Glibc)
import Glibc
#endif

/// Why the LED lines could not be had or driven; every message names the chip and, where
/// one is involved, the line, and says what to do.
public enum GPIOError: Error, Hashable, Sendable, CustomStringConvertible {
    /// No such device file.
    case noSuchChip(chip: String)
    /// The file exists but is not a GPIO character device.
    case notAGPIOChip(chip: String)
    /// The device or the line may not be opened by this user.
    case permissionDenied(chip: String, offset: Int?)
    /// The offset is past the chip's last line (or negative).
    case noSuchLine(chip: String, offset: Int, lineCount: Int)
    /// Another program (or another request of ours) holds the line.
    case lineBusy(chip: String, offset: Int, consumer: String?)
    /// Two LEDs were given the same line.
    case sameLineTwice(chip: String, offset: Int, first: LEDColor, second: LEDColor)
    /// Any other failure of the C library, with its errno.
    case system(chip: String, offset: Int?, operation: String, errno: Int32)
    /// The lines were released already (after `release()`).
    case released(chip: String)

    public var description: String {
        switch self {
        case .noSuchChip(let chip):
            return "no GPIO chip \(chip) (ls /dev/gpiochip* lists the chips; a Raspberry Pi has its header lines on gpiochip0, or gpiochip4 on a Pi 5 with an older kernel)"
        case .notAGPIOChip(let chip):
            return "\(chip) is not a GPIO character device (expected gpiochipN or /dev/gpiochipN)"
        case .permissionDenied(let chip, let offset):
            return "\(GPIOError.place(chip, offset)): permission denied; add the user to the gpio group (usermod -aG gpio USER) or run as the beacon-gateway service"
        case .noSuchLine(let chip, let offset, let lineCount):
            return "\(chip) has \(lineCount) lines; line \(offset) does not exist"
        case .lineBusy(let chip, let offset, let consumer):
            let who = consumer.map { "used by \"\($0)\"" } ?? "used by another program"
            return "\(chip) line \(offset): busy (\(who)); gpioinfo \(chip) shows who holds it"
        case .sameLineTwice(let chip, let offset, let first, let second):
            return "\(chip) line \(offset) is given for both \(first) and \(second); each LED needs its own line"
        case .system(let chip, let offset, let operation, let code):
            return "\(GPIOError.place(chip, offset)): \(operation) failed: \(String(cString: strerror(code)))"
        case .released(let chip):
            return "\(chip): the LED lines were already released"
        }
    }

    private static func place(_ chip: String, _ offset: Int?) -> String {
        offset.map { "\(chip) line \($0)" } ?? chip
    }
}
