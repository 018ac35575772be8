/// The Bluetooth controller as the fleet sees it.
public struct ControllerSnapshot: Hashable, Sendable {
    public enum State: String, Hashable, Sendable {
        case up, recovering, absent
    }

    public var state: State
    /// `B8:27:EB:00:00:01`; nil before the controller was first read.
    public var address: String?
    /// `legacy` or `extended`; nil before the controller was first read.
    public var family: String?
    public var resets: Int

    public init(state: State, address: String? = nil, family: String? = nil, resets: Int = 0) {
        self.state = state
        self.address = address
        self.family = family
        self.resets = resets
    }
}
