#if canImport(Glibc)
import Glibc
#endif

/// The standard termios speeds: a UART can only be set to one of these `Bn` constants.
public enum SerialBaudRate {
    /// H4 dongles (nRF52840 HCI UART firmware, most USB-serial controllers) run at 1 Mbaud.
    public static let `default` = 1_000_000

    private static let table: [(baud: Int, speed: speed_t)] = [
        (9600, speed_t(B9600)), (19200, speed_t(B19200)), (38400, speed_t(B38400)),
        (57600, speed_t(B57600)), (115_200, speed_t(B115200)), (230_400, speed_t(B230400)),
        (460_800, speed_t(B460800)), (500_000, speed_t(B500000)), (576_000, speed_t(B576000)),
        (921_600, speed_t(B921600)), (1_000_000, speed_t(B1000000)), (1_152_000, speed_t(B1152000)),
        (1_500_000, speed_t(B1500000)), (2_000_000, speed_t(B2000000)), (2_500_000, speed_t(B2500000)),
        (3_000_000, speed_t(B3000000)), (3_500_000, speed_t(B3500000)), (4_000_000, speed_t(B4000000)),
    ]

    public static var supported: [Int] { table.map(\.baud) }

    /// The termios speed for `baud`, or `nil` when it is not a standard rate.
    public static func speed(for baud: Int) -> speed_t? {
        table.first { $0.baud == baud }?.speed
    }
}
