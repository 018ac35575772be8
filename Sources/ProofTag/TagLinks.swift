import EventLoop

/// Which centrals a tag keeps and when it advertises (docs/gatt-server.md, "The reference
/// tag"), sans-IO: no central can keep a door from proving the tag. Each central that
/// connects has `idleLimit` to write a challenge the tag answers, or is disconnected; the
/// tag advertises again at once after a connection when the controller can advertise
/// connectable while a peripheral (LE Supported States), up to `maxLinks` centrals, and
/// otherwise when a link ends. Inputs: connections, answered challenges, closed links, time.
public struct TagLinks: Sendable {
    public enum Action: Hashable, Sendable {
        /// Start connectable advertising.
        case advertise
        /// This central wrote no answered challenge within `idleLimit`: disconnect it.
        case disconnectIdle(UInt16)
    }

    /// A door writes its challenge within a second or two of connecting; its whole
    /// handshake ends within 10 s (docs/proof-protocol.md, "A hostile tag").
    public var idleLimit: Duration
    public var maxLinks: Int
    public let advertisesWhileConnected: Bool
    /// Each link, with the time it must have a challenge answered by (nil once it has).
    private var links: [UInt16: Instant?] = [:]
    /// Whether the controller is advertising (legacy connectable advertising stops at a connection).
    private var advertising = false

    public init(advertisesWhileConnected: Bool, idleLimit: Duration = .seconds(10), maxLinks: Int = 3) {
        self.advertisesWhileConnected = advertisesWhileConnected
        self.idleLimit = idleLimit
        self.maxLinks = max(1, maxLinks)
    }

    public var linkCount: Int { links.count }

    public var nextDeadline: Instant? { links.values.compactMap { $0 }.min() }

    /// The controller is up (at start, after a reset): no links, advertising from now.
    public mutating func controllerUp() -> [Action] {
        links = [:]
        advertising = true
        return [.advertise]
    }

    public mutating func connected(_ handle: UInt16, now: Instant) -> [Action] {
        links[handle] = now + idleLimit
        advertising = false
        return advertiseIfRoom()
    }

    /// A challenge on this link was answered: it is a door at work, kept until it leaves.
    public mutating func challengeAnswered(_ handle: UInt16) {
        if links[handle] != nil { links[handle] = .some(nil) }
    }

    public mutating func closed(_ handle: UInt16) -> [Action] {
        guard links.removeValue(forKey: handle) != nil else { return [] }
        return advertiseIfRoom()
    }

    public mutating func timerFired(now: Instant) -> [Action] {
        var actions = [Action]()
        for (handle, deadline) in links.sorted(by: { $0.key < $1.key }) {
            guard let deadline, deadline <= now else { continue }
            // Once: its close comes back through `closed`.
            links[handle] = .some(nil)
            actions.append(.disconnectIdle(handle))
        }
        return actions
    }

    private mutating func advertiseIfRoom() -> [Action] {
        guard !advertising, links.count < maxLinks, links.isEmpty || advertisesWhileConnected else { return [] }
        advertising = true
        return [.advertise]
    }
}
