#if canImport(Glibc)
import Glibc
#endif

/// The open(2)/termios calls behind `SerialTransport.open()`.
enum SerialPort {
    static func open(path: String, baud: Int, flowControl: Bool) throws(TransportError) -> Int32 {
        guard let speed = SerialBaudRate.speed(for: baud) else { throw .unsupportedBaudRate(baud) }
        // O_NOCTTY: a dongle must never become this service's controlling terminal.
        let fd = Glibc.open(path, O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { throw .serialDevice(path: path, call: "open", errno: errno) }
        var keep = false
        defer { if !keep { _ = close(fd) } }

        var settings = termios()
        guard tcgetattr(fd, &settings) == 0 else { throw .serialDevice(path: path, call: "tcgetattr", errno: errno) }
        cfmakeraw(&settings)
        settings.c_cflag &= ~tcflag_t(CSIZE | PARENB | CSTOPB)
        settings.c_cflag |= tcflag_t(CS8 | CLOCAL | CREAD)
        if flowControl {
            settings.c_cflag |= tcflag_t(CRTSCTS)
        } else {
            settings.c_cflag &= ~tcflag_t(CRTSCTS)
        }
        guard cfsetispeed(&settings, speed) == 0, cfsetospeed(&settings, speed) == 0 else {
            throw .serialDevice(path: path, call: "cfsetspeed", errno: errno)
        }
        guard tcsetattr(fd, TCSANOW, &settings) == 0 else { throw .serialDevice(path: path, call: "tcsetattr", errno: errno) }

        // tcsetattr succeeds if *any* change took; read back what the driver accepted.
        var applied = termios()
        guard tcgetattr(fd, &applied) == 0 else { throw .serialDevice(path: path, call: "tcgetattr", errno: errno) }
        if cfgetospeed(&applied) != speed { throw .unsupportedBaudRate(baud) }
        if flowControl && applied.c_cflag & tcflag_t(CRTSCTS) == 0 { throw .serialFlowControlUnsupported(path: path) }

        // Whatever the dongle sent before we were listening belongs to no packet we know.
        _ = tcflush(fd, TCIOFLUSH)
        keep = true
        return fd
    }
}
