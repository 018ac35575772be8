/// A parsed `--transport` / `[bluetooth] transport` value (see docs/transports.md): a
/// description of how to reach a controller, not the transport itself. It lives here, below
/// the transports, so the configuration can validate it without linking them;
/// `makeTransport(_:capturePath:)` in HCITransport turns it into one.
public enum TransportSpec: Hashable, Sendable, CustomStringConvertible {
    /// `hciN`: the kernel's adapter N, through HCI_CHANNEL_USER.
    case userChannel(index: Int)
    /// `tcp:HOST:PORT`, `tcp:[IPv6]:PORT`: H4 over TCP.
    case tcp(host: String, port: UInt16)
    /// `serial:PATH` or `serial:PATH@BAUD`: H4 over a UART.
    case serial(path: String, baud: Int)
    /// `btsnoop:FILE`: replay a capture.
    case btsnoop(path: String)

    public static let validForms =
        "hciN (e.g. hci0), tcp:HOST:PORT (e.g. tcp:127.0.0.1:9000 or tcp:[::1]:9000), "
        + "serial:PATH[@BAUD] (e.g. serial:/dev/ttyACM0@1000000) or btsnoop:FILE"

    /// The reason given for text that names no transport kind at all.
    public static let unknownKindReason = "unknown kind"

    /// H4 dongles (nRF52840 HCI UART firmware, most USB-serial controllers) run at 1 Mbaud.
    public static let defaultSerialBaudRate = 1_000_000

    /// The standard termios speeds: a UART can only be set to one of these
    /// (`SerialBaudRate` in HCITransport maps each to its `Bn` constant).
    public static let standardBaudRates = [
        9600, 19200, 38400, 57600, 115_200, 230_400, 460_800, 500_000, 576_000, 921_600,
        1_000_000, 1_152_000, 1_500_000, 2_000_000, 2_500_000, 3_000_000, 3_500_000, 4_000_000,
    ]

    /// hci_dev is 16 bits and 0xFFFF means "no device".
    public static let maximumAdapterIndex = 0xFFFE

    public init(parsing text: String) throws(TransportSpecError) {
        func invalid(_ reason: String) -> TransportSpecError { .invalid(text, reason: reason) }

        if let rest = text.dropPrefix("tcp:") {
            let host: Substring
            let portText: Substring
            if rest.hasPrefix("[") {
                guard let close = rest.firstIndex(of: "]") else { throw invalid("missing ] after the IPv6 address") }
                host = rest[rest.index(after: rest.startIndex) ..< close]
                let after = rest[rest.index(after: close)...]
                guard after.hasPrefix(":") else { throw invalid("missing :PORT after ]") }
                portText = after.dropFirst()
            } else {
                guard let colon = rest.lastIndex(of: ":") else { throw invalid("missing :PORT") }
                host = rest[..<colon]
                portText = rest[rest.index(after: colon)...]
                if host.contains(":") { throw invalid("write an IPv6 address in brackets, as in tcp:[::1]:9000") }
            }
            guard !host.isEmpty else { throw invalid("missing HOST") }
            guard !host.contains(where: { $0.isWhitespace || $0 == "/" || $0 == "[" || $0 == "]" }) else {
                throw invalid("HOST must be a host name or an IP address")
            }
            guard let port = Self.decimal(portText), (1 ... 65535).contains(port) else {
                throw invalid("PORT must be a number from 1 to 65535")
            }
            self = .tcp(host: String(host), port: UInt16(port))
        } else if let rest = text.dropPrefix("serial:") {
            var path = rest
            var baud = Self.defaultSerialBaudRate
            if let at = rest.lastIndex(of: "@") {
                path = rest[..<at]
                guard let value = Self.decimal(rest[rest.index(after: at)...]) else { throw invalid("BAUD must be a number") }
                guard Self.standardBaudRates.contains(value) else { throw .unsupportedBaudRate(value) }
                baud = value
            }
            guard !path.isEmpty else { throw invalid("missing the device PATH") }
            self = .serial(path: String(path), baud: baud)
        } else if let rest = text.dropPrefix("btsnoop:") {
            guard !rest.isEmpty else { throw invalid("missing the FILE") }
            self = .btsnoop(path: String(rest))
        } else if let rest = text.dropPrefix("hci") {
            guard let index = Self.decimal(rest), index <= Self.maximumAdapterIndex else {
                throw invalid("an adapter is hci followed by its number")
            }
            self = .userChannel(index: index)
        } else {
            throw invalid(Self.unknownKindReason)
        }
    }

    public var description: String {
        switch self {
        case .userChannel(let index): "hci\(index)"
        case .tcp(let host, let port): host.contains(":") ? "tcp:[\(host)]:\(port)" : "tcp:\(host):\(port)"
        case .serial(let path, let baud): baud == Self.defaultSerialBaudRate ? "serial:\(path)" : "serial:\(path)@\(baud)"
        case .btsnoop(let path): "btsnoop:\(path)"
        }
    }

    /// Digits only (no sign, no spaces), at most 7 of them, so the value cannot overflow.
    private static func decimal(_ text: Substring) -> Int? {
        guard !text.isEmpty, text.count <= 7, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
            return nil
        }
        return Int(text)
    }
}

extension String {
    fileprivate func dropPrefix(_ prefix: String) -> Substring? {
        hasPrefix(prefix) ? self[index(startIndex, offsetBy: prefix.count)...] : nil
    }
}

/// Why a `--transport` / `[bluetooth] transport` text is not a transport.
public enum TransportSpecError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Not one of the valid forms; `reason` says which part is wrong.
    case invalid(String, reason: String)
    /// `serial:PATH@BAUD` with a speed a UART cannot be set to.
    case unsupportedBaudRate(Int)

    public var description: String {
        switch self {
        case .invalid(let text, let reason):
            "invalid transport \"\(text)\": \(reason). Valid forms: \(TransportSpec.validForms)"
        case .unsupportedBaudRate(let baud):
            TransportSpecError.unsupportedBaudRateMessage(baud)
        }
    }

    /// Shared with the transport's own error for a speed the device refuses.
    public static func unsupportedBaudRateMessage(_ baud: Int) -> String {
        "unsupported serial speed \(baud): use one of \(TransportSpec.standardBaudRates.map(String.init).joined(separator: ", "))"
    }
}
