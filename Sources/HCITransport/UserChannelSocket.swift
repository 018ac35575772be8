#if canImport(Glibc)
import Glibc
#endif
import SystemCalls
import CBluetooth
import EventLoop
import HCI

/// The system calls that open an HCI user channel, each failure mapped to its cause.
enum UserChannelSocket {
    /// Brings the adapter down and binds its user channel. A bind refused with EBUSY (the
    /// kernel still taking the adapter down, or bluetoothd keeping it up) is thrown as
    /// `.adapterManagedByKernel` at once: waiting here would stall the caller's event
    /// loop, so the transport decides whether to try again shortly.
    static func open(index: Int) throws(TransportError) -> Int32 {
        guard (0 ... TransportSpec.maximumAdapterIndex).contains(index) else { throw .noSuchAdapter(index: index) }
        try bringDown(index: index)

        let fd = try makeSocket(index: index)
        var address = sockaddr_hci()
        address.hci_family = sa_family_t(AF_BLUETOOTH)
        address.hci_dev = UInt16(index)
        address.hci_channel = UInt16(HCI_CHANNEL_USER)

        let result = SystemCall.retryingInterrupts {
            withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(fd, $0, socklen_t(MemoryLayout<sockaddr_hci>.size))
                }
            }
        }
        guard result == 0 else {
            let error = errno
            _ = close(fd)
            throw TransportError.userChannel(index: index, step: .bind, errno: error)
        }
        enlargeReceiveBuffer(fd)
        // Each packet stamped as it arrives: presence counts a report from then, not from
        // the read that let it gather (`ArrivalMarks`). Without stamps (refused), reports
        // count from the read, as on the other transports.
        DescriptorStream.stampArrivals(fd)
        return fd
    }

    /// Room for what a controller sends while the agent lets reports gather
    /// (`ReadGathering`): the kernel charges each queued packet its whole buffer (about
    /// 2 KiB for a UART controller's 40-byte report), so the default 208 KiB holds about
    /// 90 reports, under 10 ms at 10,000 a second, and drops the rest. 16 MiB (the kernel
    /// doubles it) holds about 16,000: five times the reports a wake-up aims to find, and
    /// the longest pause (a second) when a door goes from quiet to 10,000 reports a
    /// second at once. It is kernel memory, taken only while reports wait.
    /// SO_RCVBUFFORCE passes `net.core.rmem_max` with CAP_NET_ADMIN, which the user
    /// channel needs anyway; without it SO_RCVBUF gets what the limit allows.
    static let receiveBufferBytes: Int32 = 16 << 20

    private static func enlargeReceiveBuffer(_ fd: Int32) {
        var bytes = receiveBufferBytes
        let size = socklen_t(MemoryLayout<Int32>.size)
        if setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &bytes, size) != 0 {
            _ = setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bytes, size)
        }
    }

    private static func makeSocket(index: Int) throws(TransportError) -> Int32 {
        let type = Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
        let fd = socket(AF_BLUETOOTH, type, BTPROTO_HCI)
        guard fd >= 0 else { throw TransportError.userChannel(index: index, step: .socket, errno: errno) }
        return fd
    }

    /// The user channel can only be bound to a device that is down, so take it down first
    /// (through a separate, unbound socket, as hciconfig does).
    private static func bringDown(index: Int) throws(TransportError) {
        let control = try makeSocket(index: index)
        defer { _ = close(control) }
        if SystemCall.retryingInterrupts({ cbt_hci_dev_down(control, CInt(index)) }) < 0 {
            let error = errno
            // EALREADY: it was down already, which is what we wanted.
            if error == EALREADY { return }
            throw TransportError.userChannel(index: index, step: .bringDown, errno: error)
        }
    }
}
