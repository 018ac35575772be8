/// `[bluetooth] transport`: how the agent reaches the controller (SPEC §2).
public enum BluetoothTransport: Hashable, Sendable, CustomStringConvertible {
    /// `hciN`: a raw HCI user-channel socket on that adapter index.
    case hci(index: UInt16)
    /// `tcp:HOST:PORT`: H4 over TCP (virtual or remote controllers).
    case tcp(host: String, port: UInt16)
    /// `serial:/dev/ttyACM0[@BAUD]`: H4 over a UART, 8N1 with RTS/CTS.
    case serial(path: String, baudRate: Int)
    /// `btsnoop:FILE`: replays a capture's controller-to-host packets.
    case btsnoop(path: String)

    public static let defaultBaudRate = 1_000_000

    /// The form written in configuration files and on the command line.
    public var description: String {
        switch self {
        case let .hci(index): "hci\(index)"
        case let .tcp(host, port): host.contains(":" as Character) ? "tcp:[\(host)]:\(port)" : "tcp:\(host):\(port)"
        case let .serial(path, baudRate):
            baudRate == Self.defaultBaudRate ? "serial:\(path)" : "serial:\(path)@\(baudRate)"
        case let .btsnoop(path): "btsnoop:\(path)"
        }
    }

    /// Parses `hci0`, `tcp:HOST:PORT` (IPv6 hosts in brackets), `serial:PATH[@BAUD]` or
    /// `btsnoop:FILE`; `nil` for anything else.
    public init?(_ text: String) {
        if text.hasPrefix("hci") {
            let digits = text.dropFirst(3)
            guard !digits.isEmpty, digits.count <= 5, digits.allSatisfy(\.isASCIIDigit),
                  let index = UInt16(digits) else { return nil }
            self = .hci(index: index)
        } else if text.hasPrefix("tcp:") {
            let rest = text.dropFirst(4)
            guard let colon = rest.lastIndex(of: ":") else { return nil }
            var host = rest[..<colon]
            if host.hasPrefix("["), host.hasSuffix("]"), host.count > 2 {
                host = host.dropFirst().dropLast()
            }
            let portText = rest[rest.index(after: colon)...]
            guard !host.isEmpty, !host.contains(where: { $0.isWhitespace || $0 == "/" || $0 == "[" || $0 == "]" }),
                  portText.allSatisfy(\.isASCIIDigit), portText.count <= 5,
                  let port = UInt16(portText), port != 0 else { return nil }
            self = .tcp(host: String(host), port: port)
        } else if text.hasPrefix("serial:") {
            let rest = text.dropFirst(7)
            var path = rest
            var baudRate = Self.defaultBaudRate
            if let at = rest.lastIndex(of: "@") {
                let baudText = rest[rest.index(after: at)...]
                guard !baudText.isEmpty, baudText.count <= 8, baudText.allSatisfy(\.isASCIIDigit),
                      let baud = Int(baudText), baud > 0 else { return nil }
                baudRate = baud
                path = rest[..<at]
            }
            guard path.hasPrefix("/"), path.count > 1 else { return nil }
            self = .serial(path: String(path), baudRate: baudRate)
        } else if text.hasPrefix("btsnoop:") {
            let path = text.dropFirst(8)
            guard !path.isEmpty else { return nil }
            self = .btsnoop(path: String(path))
        } else {
            return nil
        }
    }
}

extension Character {
    var isASCIIDigit: Bool { isASCII && isNumber }
}
