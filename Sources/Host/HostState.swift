public enum HostState: Hashable, Sendable {
    /// Waiting for the transport to open for the first time.
    case starting
    /// Resetting and reading the controller.
    case initializing
    case scanning(ControllerInfo)
    case recovering(reason: RecoveryReason, attempt: Int)

    public var isScanning: Bool {
        if case .scanning = self { return true }
        return false
    }
}
