import CGpiod
#if canImport(Glibc)
import Glibc
#endif

/// Something that shows `LEDLevels`: the GPIO lines, or a recorder in tests.
public protocol LEDOutput: AnyObject {
    func show(_ levels: LEDLevels) throws(GPIOError)
}

/// The three LED lines, requested as outputs through libgpiod 2 (the kernel's v2 GPIO
/// uAPI). The only file that touches libgpiod: no C type leaves it.
///
/// The lines start dark and are held until `release()` or deinit, which darkens them
/// first (the kernel may leave a released output where it was) and gives them back.
/// `active_low` is the kernel's business: the values set here are always "lit" or
/// "dark", so `gpioinfo` shows the lines as active-low and nothing here inverts.
public final class GPIOLines: LEDOutput {
    /// What `gpioinfo` shows as the holder of the lines.
    public static let consumer = "beacon-gateway"

    public let wiring: LEDWiring
    private var request: OpaquePointer?

    /// Requests the three lines of `wiring` as outputs, dark.
    public init(wiring: LEDWiring) throws(GPIOError) {
        self.wiring = wiring
        request = try GPIOLines.requestLines(wiring)
    }

    deinit {
        release()
    }

    /// Sets every line to `levels`.
    public func show(_ levels: LEDLevels) throws(GPIOError) {
        guard let request else { throw .released(chip: wiring.chip) }
        // One ioctl for the three lines: a change of pattern shows on all LEDs at once.
        let offsets = LEDColor.allCases.map { UInt32(truncatingIfNeeded: wiring.offset(of: $0)) }
        let values = LEDColor.allCases.map { levels[$0] ? GPIOD_LINE_VALUE_ACTIVE : GPIOD_LINE_VALUE_INACTIVE }
        let result = offsets.withUnsafeBufferPointer { offsetBuffer in
            values.withUnsafeBufferPointer { valueBuffer in
                gpiod_line_request_set_values_subset(request, offsetBuffer.count, offsetBuffer.baseAddress, valueBuffer.baseAddress)
            }
        }
        if result != 0 {
            throw GPIOError.system(chip: wiring.chip, offset: nil, operation: "setting the LED lines", errno: errno)
        }
    }

    /// Gives the lines back to the kernel, darkening them first unless `darken` is false.
    /// Idempotent.
    ///
    /// `darken: false` is for a fatal configuration error: red stays lit after the agent
    /// exits (a Pi's pins keep their last output level when released), so the door says
    /// why it is dead while systemd leaves the service stopped.
    public func release(darken: Bool = true) {
        guard let request else { return }
        if darken { try? show(.allOff) }
        gpiod_line_request_release(request)
        self.request = nil
    }

    public var isReleased: Bool { request == nil }

    // MARK: Requesting

    private static func requestLines(_ wiring: LEDWiring) throws(GPIOError) -> OpaquePointer {
        let chipName = wiring.chip
        var seen: [Int: LEDColor] = [:]
        for color in LEDColor.allCases {
            let offset = wiring.offset(of: color)
            if let first = seen[offset] { throw .sameLineTwice(chip: chipName, offset: offset, first: first, second: color) }
            seen[offset] = color
        }

        let chip = try openChip(wiring)
        defer { gpiod_chip_close(chip) }

        guard let info = gpiod_chip_get_info(chip) else {
            throw .system(chip: chipName, offset: nil, operation: "reading the chip's information", errno: errno)
        }
        let lineCount = gpiod_chip_info_get_num_lines(info)
        gpiod_chip_info_free(info)
        for color in LEDColor.allCases {
            let offset = wiring.offset(of: color)
            guard offset >= 0, UInt(offset) < UInt(lineCount) else {
                throw .noSuchLine(chip: chipName, offset: offset, lineCount: Int(clamping: lineCount))
            }
            // Ask first who holds the line: the request's EBUSY alone cannot say.
            if let consumer = try usedBy(chip, chipName: chipName, offset: offset) {
                throw .lineBusy(chip: chipName, offset: offset, consumer: consumer.isEmpty ? nil : consumer)
            }
        }

        guard let settings = gpiod_line_settings_new() else {
            throw .system(chip: chipName, offset: nil, operation: "allocating line settings", errno: errno)
        }
        defer { gpiod_line_settings_free(settings) }
        guard gpiod_line_settings_set_direction(settings, GPIOD_LINE_DIRECTION_OUTPUT) == 0,
              gpiod_line_settings_set_output_value(settings, GPIOD_LINE_VALUE_INACTIVE) == 0
        else {
            throw .system(chip: chipName, offset: nil, operation: "preparing line settings", errno: errno)
        }
        gpiod_line_settings_set_active_low(settings, wiring.activeLow)

        guard let lineConfig = gpiod_line_config_new() else {
            throw .system(chip: chipName, offset: nil, operation: "allocating a line configuration", errno: errno)
        }
        defer { gpiod_line_config_free(lineConfig) }
        var offsets = LEDColor.allCases.map { UInt32(truncatingIfNeeded: wiring.offset(of: $0)) }
        let added = offsets.withUnsafeMutableBufferPointer { buffer in
            gpiod_line_config_add_line_settings(lineConfig, buffer.baseAddress, buffer.count, settings)
        }
        guard added == 0 else {
            throw .system(chip: chipName, offset: nil, operation: "configuring the lines", errno: errno)
        }

        guard let requestConfig = gpiod_request_config_new() else {
            throw .system(chip: chipName, offset: nil, operation: "allocating a request", errno: errno)
        }
        defer { gpiod_request_config_free(requestConfig) }
        gpiod_request_config_set_consumer(requestConfig, consumer)

        guard let request = gpiod_chip_request_lines(chip, requestConfig, lineConfig) else {
            let code = errno
            switch code {
            case EBUSY:
                // Taken between our look and the request; say which, if we can tell.
                let offset = LEDColor.allCases.map { wiring.offset(of: $0) }.first { (try? usedBy(chip, chipName: chipName, offset: $0)) != nil }
                throw .lineBusy(chip: chipName, offset: offset ?? wiring.green, consumer: nil)
            case EACCES, EPERM:
                throw .permissionDenied(chip: chipName, offset: nil)
            default:
                throw .system(chip: chipName, offset: nil, operation: "requesting the LED lines", errno: code)
            }
        }
        return request
    }

    private static func openChip(_ wiring: LEDWiring) throws(GPIOError) -> OpaquePointer {
        let path = wiring.chipPath
        var status = stat()
        if stat(path, &status) != 0 {
            let code = errno
            if code == ENOENT || code == ENOTDIR { throw .noSuchChip(chip: wiring.chip) }
            if code == EACCES { throw .permissionDenied(chip: wiring.chip, offset: nil) }
            throw .system(chip: wiring.chip, offset: nil, operation: "looking up the chip", errno: code)
        }
        guard (status.st_mode & S_IFMT) == S_IFCHR else { throw .notAGPIOChip(chip: wiring.chip) }
        guard let chip = gpiod_chip_open(path) else {
            let code = errno
            switch code {
            case EACCES, EPERM: throw .permissionDenied(chip: wiring.chip, offset: nil)
            case ENOENT: throw .noSuchChip(chip: wiring.chip)
            case ENODEV, ENOTTY, EINVAL: throw .notAGPIOChip(chip: wiring.chip)
            default: throw .system(chip: wiring.chip, offset: nil, operation: "opening the chip", errno: code)
            }
        }
        return chip
    }

    /// The consumer holding `offset` ("" if it has none), or `nil` if the line is free.
    private static func usedBy(_ chip: OpaquePointer, chipName: String, offset: Int) throws(GPIOError) -> String? {
        guard let info = gpiod_chip_get_line_info(chip, UInt32(truncatingIfNeeded: offset)) else {
            throw .system(chip: chipName, offset: offset, operation: "reading the line's information", errno: errno)
        }
        defer { gpiod_line_info_free(info) }
        guard gpiod_line_info_is_used(info) else { return nil }
        return gpiod_line_info_get_consumer(info).map { String(cString: $0) } ?? ""
    }
}
