/// Where the LEDs hang: a gpiochip and one line offset per LED (`[leds]` in docs/configuration.md).
public struct LEDWiring: Hashable, Sendable {
    /// A chip name such as `gpiochip0` (looked up in `/dev`) or a path such as `/dev/gpiochip0`.
    public var chip: String
    public var green: Int
    public var amber: Int
    public var red: Int
    /// The LED lights when the line is low (common-anode wiring, or a sinking driver).
    public var activeLow: Bool

    /// The Raspberry Pi's header lines.
    public static let defaultChip = "gpiochip0"

    public init(chip: String = LEDWiring.defaultChip, green: Int, amber: Int, red: Int, activeLow: Bool = false) {
        self.chip = chip
        self.green = green
        self.amber = amber
        self.red = red
        self.activeLow = activeLow
    }

    public func offset(of color: LEDColor) -> Int {
        switch color {
        case .green: green
        case .amber: amber
        case .red: red
        }
    }

    /// The character device for `chip`: a bare name lives in `/dev`.
    public var chipPath: String {
        chip.contains("/") ? chip : "/dev/" + chip
    }
}
