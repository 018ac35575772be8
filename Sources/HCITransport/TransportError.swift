#if canImport(Glibc)
import Glibc
#endif
import HCI

/// Why a transport could not open, send or receive — each case with a message that names
/// the cause and says what the person at the door can do about it.
public enum TransportError: Error, Hashable, Sendable, CustomStringConvertible {
    // hciN (HCI_CHANNEL_USER)
    case bluetoothUnsupported
    case noSuchAdapter(index: Int)
    case adapterManagedByKernel(index: Int)
    case userChannelTaken(index: Int)
    /// This process's last close of the adapter has not returned yet (the kernel is
    /// resetting the controller): retry shortly.
    case adapterStillClosing(index: Int)
    /// The kernel is still taking the adapter down (bind said EBUSY); try again shortly.
    case adapterGoingDown(index: Int)
    case permissionDenied(index: Int)
    case rfkillBlocked(index: Int)
    case adapterSystemCall(index: Int, call: String, errno: Int32)

    // tcp:HOST:PORT
    case hostNotFound(host: String, reason: String)
    case connectFailed(host: String, port: UInt16, errno: Int32)
    case connectTimedOut(host: String, port: UInt16, milliseconds: Int)

    // serial:PATH@BAUD
    case unsupportedBaudRate(Int)
    case serialFlowControlUnsupported(path: String)
    case serialDevice(path: String, call: String, errno: Int32)

    // btsnoop:FILE and --capture FILE
    case replayFile(path: String, errno: Int32)
    case corruptReplayFile(path: String, BTSnoop.FormatError)
    case captureFile(path: String, errno: Int32)

    // Any open transport
    case notOpen
    /// The peer closed the connection or the device went away.
    case closed
    case io(call: String, errno: Int32)
    /// The controller stopped taking bytes for so long that the send queue filled up.
    case sendQueueFull(bytes: Int)

    public var description: String { message }

    /// One sentence or two for a log line or the terminal: cause first, then the remedy.
    public var message: String {
        switch self {
        case .bluetoothUnsupported:
            "this kernel has no Bluetooth support (AF_BLUETOOTH): use a kernel with CONFIG_BT, "
                + "or reach a controller with tcp:HOST:PORT or serial:PATH instead"
        case .noSuchAdapter(let index):
            "no adapter hci\(index); `ls /sys/class/bluetooth` shows the ones present"
        case .adapterManagedByKernel(let index):
            "hci\(index) is up and managed by bluetoothd (EBUSY): stop it (`sudo systemctl disable --now bluetooth`; "
                + "bluetoothd cannot be told to leave one adapter alone); the gateway keeps trying meanwhile"
        case .userChannelTaken(let index):
            "another program holds the user channel of hci\(index) (EUSERS; is a second beacon-gateway running?): stop it"
        case .adapterStillClosing(let index):
            "hci\(index) is still being handed back to the kernel (the last close has not finished); "
                + "opening it again waits for that"
        case .adapterGoingDown(let index):
            "hci\(index) is still being taken down by the kernel; opening it again shortly"
        case .permissionDenied(let index):
            "opening hci\(index) needs CAP_NET_ADMIN (EPERM): run as root or give the binary/service the capability "
                + "(AmbientCapabilities=CAP_NET_ADMIN, or `setcap cap_net_admin+ep` on the binary)"
        case .rfkillBlocked(let index):
            "hci\(index) is blocked by rfkill (ERFKILL): `rfkill unblock bluetooth`"
        case .adapterSystemCall(let index, let call, let errno):
            "hci\(index): \(call) failed: \(Self.describe(errno))"
        case .hostNotFound(let host, let reason):
            "cannot resolve \"\(host)\": \(reason); check the host name in tcp:HOST:PORT"
        case .connectFailed(let host, let port, let errno):
            "cannot connect to \(Self.joined(host, port)): \(Self.describe(errno)); is the controller server running?"
        case .connectTimedOut(let host, let port, let milliseconds):
            "no answer from \(Self.joined(host, port)) within \(milliseconds) ms; check the address and any firewall"
        case .unsupportedBaudRate(let baud):
            TransportSpecError.unsupportedBaudRateMessage(baud)
        case .serialFlowControlUnsupported(let path):
            "\(path) does not support RTS/CTS flow control, which H4 over UART needs; use a port with RTS/CTS wired"
        case .serialDevice(let path, let call, let errno):
            "\(path): \(call) failed: \(Self.describe(errno))"
                + (errno == EACCES || errno == EPERM ? "; add the service user to the dialout group" : "")
                + (errno == ENOENT ? "; is the dongle plugged in? `ls /dev/tty*` shows the ports" : "")
        case .replayFile(let path, let errno):
            "cannot read the capture \(path): \(Self.describe(errno))"
        case .corruptReplayFile(let path, let error):
            "\(path) is not a usable btsnoop capture (\(error)); record one with --capture or btmon -w"
        case .captureFile(let path, let errno):
            "cannot write the capture \(path): \(Self.describe(errno)); check the directory exists and is writable"
        case .notOpen:
            "the transport is not open"
        case .closed:
            "the controller connection was closed (device unplugged or server stopped)"
        case .io(let call, let errno):
            "\(call) failed on the controller connection: \(Self.describe(errno))"
        case .sendQueueFull(let bytes):
            "the controller has not taken any of \(bytes) queued bytes; it may be hung: reset or re-plug it"
        }
    }

    static func describe(_ errno: Int32) -> String {
        "\(String(cString: strerror(errno))) (errno \(errno))"
    }

    private static func joined(_ host: String, _ port: UInt16) -> String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }
}
