/// The three LEDs of the door (see docs/leds.md).
public enum LEDColor: String, CaseIterable, Hashable, Sendable, CustomStringConvertible {
    case green
    case amber
    case red

    public var description: String { rawValue }
}

/// Which LEDs are lit at one instant. `true` means lit; `active_low` wiring is the
/// line layer's business, never the engine's.
public struct LEDLevels: Hashable, Sendable, CustomStringConvertible {
    public var green: Bool
    public var amber: Bool
    public var red: Bool

    public init(green: Bool, amber: Bool, red: Bool) {
        self.green = green
        self.amber = amber
        self.red = red
    }

    public static let allOff = LEDLevels(green: false, amber: false, red: false)
    public static let allOn = LEDLevels(green: true, amber: true, red: true)

    /// Only `color` lit.
    public static func only(_ color: LEDColor) -> LEDLevels {
        var levels = LEDLevels.allOff
        levels[color] = true
        return levels
    }

    public subscript(color: LEDColor) -> Bool {
        get {
            switch color {
            case .green: green
            case .amber: amber
            case .red: red
            }
        }
        set {
            switch color {
            case .green: green = newValue
            case .amber: amber = newValue
            case .red: red = newValue
            }
        }
    }

    /// `green=on amber=off red=blink` style, for logs and `leds test`.
    public var description: String {
        LEDColor.allCases.map { "\($0)=\(self[$0] ? "on" : "off")" }.joined(separator: " ")
    }
}
