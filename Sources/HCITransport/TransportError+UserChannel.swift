#if canImport(Glibc)
import Glibc
#endif

extension TransportError {
    /// The steps of opening `hciN` whose failures mean different things.
    public enum UserChannelStep: String, Sendable {
        /// socket(AF_BLUETOOTH, SOCK_RAW, BTPROTO_HCI)
        case socket
        /// ioctl(HCIDEVDOWN)
        case bringDown = "ioctl(HCIDEVDOWN)"
        /// bind(HCI_CHANNEL_USER)
        case bind
    }

    /// Maps the errno of one step of opening `hci<index>` to the error that names its cause.
    ///
    /// A pure function so every mapping is tested without a Bluetooth kernel.
    public static func userChannel(index: Int, step: UserChannelStep, errno: Int32) -> TransportError {
        switch errno {
        case EAFNOSUPPORT, EPROTONOSUPPORT:
            return .bluetoothUnsupported
        case ENODEV:
            return .noSuchAdapter(index: index)
        case EPERM, EACCES:
            return .permissionDenied(index: index)
        case ERFKILL:
            return .rfkillBlocked(index: index)
        case EUSERS:
            return .userChannelTaken(index: index)
        case EBUSY:
            // HCIDEVDOWN refuses with EBUSY only while another socket holds the user
            // channel; bind says EBUSY while the kernel (bluetoothd) keeps the adapter up.
            return step == .bringDown ? .userChannelTaken(index: index) : .adapterManagedByKernel(index: index)
        default:
            return .adapterSystemCall(index: index, call: step.rawValue, errno: errno)
        }
    }
}
