/// The parties that want to hear of one kind of happening (a state change, an HCI event,
/// ACL data, a closed connection), registered explicitly and told in the order they
/// registered.
///
/// Adding or removing a listener while the list is telling its listeners is allowed: a
/// listener removed then is not told anything more, even by the call under way; one added
/// then is told from the next call on. So a listener may remove itself, or another one,
/// from inside its own call.
public final class Listeners<Value> {
    /// Names one registration, for `remove(_:)`.
    public struct Registration: Hashable, Sendable {
        fileprivate let list: ObjectIdentifier
        fileprivate let id: UInt64
    }

    private var entries: [(id: UInt64, listener: (Value) -> Void)] = []
    private var lastID: UInt64 = 0

    public init() {}

    /// How many listeners are registered.
    public var count: Int { entries.count }

    /// Registers `listener` behind those already registered.
    @discardableResult
    public func add(_ listener: @escaping (Value) -> Void) -> Registration {
        lastID &+= 1
        entries.append((lastID, listener))
        return Registration(list: ObjectIdentifier(self), id: lastID)
    }

    /// Unregisters; removing twice, or a registration of another list, does nothing.
    public func remove(_ registration: Registration) {
        guard registration.list == ObjectIdentifier(self) else { return }
        entries.removeAll { $0.id == registration.id }
    }

    /// Tells every listener, in the order they registered.
    public func notify(_ value: Value) {
        // The list as it was when the call began; each entry is looked up again before
        // its turn, since an earlier listener may have removed it.
        let snapshot = entries
        for entry in snapshot where entries.contains(where: { $0.id == entry.id }) {
            entry.listener(value)
        }
    }
}
