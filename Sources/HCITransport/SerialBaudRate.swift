#if canImport(Glibc)
import Glibc
#endif
import HCI

/// The termios `Bn` constant of each standard speed (`TransportSpec.standardBaudRates`, which
/// the configuration validates against without linking this layer).
public enum SerialBaudRate {
    public static let `default` = TransportSpec.defaultSerialBaudRate

    private static let table: [(baud: Int, speed: speed_t)] = [
        (9600, speed_t(B9600)), (19200, speed_t(B19200)), (38400, speed_t(B38400)),
        (57600, speed_t(B57600)), (115_200, speed_t(B115200)), (230_400, speed_t(B230400)),
        (460_800, speed_t(B460800)), (500_000, speed_t(B500000)), (576_000, speed_t(B576000)),
        (921_600, speed_t(B921600)), (1_000_000, speed_t(B1000000)), (1_152_000, speed_t(B1152000)),
        (1_500_000, speed_t(B1500000)), (2_000_000, speed_t(B2000000)), (2_500_000, speed_t(B2500000)),
        (3_000_000, speed_t(B3000000)), (3_500_000, speed_t(B3500000)), (4_000_000, speed_t(B4000000)),
    ]

    /// The speeds this table maps; a unit test holds it equal to `TransportSpec.standardBaudRates`.
    public static var supported: [Int] { table.map(\.baud) }

    /// The termios speed for `baud`, or `nil` when it is not a standard rate.
    public static func speed(for baud: Int) -> speed_t? {
        table.first { $0.baud == baud }?.speed
    }
}
