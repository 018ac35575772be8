import EventLoop
import HCI

extension ConnectScheduler {
    // MARK: Controller

    /// The controller is up (after bring-up or recovery). Its accept list is unknown, so
    /// the first arming clears it.
    public mutating func controllerReady(_ capabilities: Capabilities, now: Instant) -> [ConnectAction] {
        self.capabilities = capabilities
        acceptListCapacity = 0
        acceptList = nil
        learnedConnectionLimit = nil
        scanningPaused = false
        takeScanningTurn = false
        state = .disarmed
        var actions: [ConnectAction] = []
        if !capabilities.canScanWhileInitiating {
            actions.append(.log("LE Supported States forbid scanning while initiating: scanning and connecting take turns"))
        }
        reconcile(now: now, into: &actions)
        return actions
    }

    /// The controller was reset or lost: its connections and accept list are gone.
    public mutating func controllerReset(now: Instant) -> [ConnectAction] {
        var actions: [ConnectAction] = []
        for (handle, connection) in connections.sorted(by: { $0.key < $1.key }) {
            if let tagIndex = connection.tagIndex, wanted[tagIndex] != nil {
                actions.append(.connectionLost(tagIndex: tagIndex, handle: handle, reason: .hardwareFailure))
            }
        }
        connections.removeAll()
        acceptList = nil
        scanningPaused = false
        state = .unavailable
        return actions
    }

    /// Pauses initiation (enrolment on a controller that cannot advertise connectable
    /// while initiating): an armed request is cancelled and none is made until resumed.
    /// Wanted tags stay wanted and connections stay up.
    public mutating func setInitiationPaused(_ paused: Bool, now: Instant) -> [ConnectAction] {
        guard paused != initiationPaused else { return [] }
        initiationPaused = paused
        var actions: [ConnectAction] = [.log(paused ? "persistent-connect initiation paused: the controller cannot advertise "
            + "connectable while initiating" : "persistent-connect initiation resumed")]
        reconcile(now: now, into: &actions)
        return actions
    }

    // MARK: Wanted set

    /// A tag needs a connection (a proof, or `track = "connection"`). Calling it again
    /// with the same peer changes nothing.
    public mutating func want(tagIndex: Int, peer: ConnectPeer, tracked: Bool = false, now: Instant) -> [ConnectAction] {
        if let existing = wanted[tagIndex], existing.peer == peer, existing.tracked == tracked { return [] }
        let served = wanted[tagIndex]?.served ?? 0
        wanted[tagIndex] = Wanted(peer: peer, tracked: tracked, served: served)
        var actions: [ConnectAction] = []
        reconcile(now: now, into: &actions)
        return actions
    }

    /// The tag needs no connection any more. A connection-tracked tag's link is dropped;
    /// a proof's connection is left to the proof, which disconnects when it is done.
    public mutating func unwant(tagIndex: Int, now: Instant) -> [ConnectAction] {
        guard let removed = wanted.removeValue(forKey: tagIndex) else { return [] }
        var actions: [ConnectAction] = []
        if removed.tracked {
            for (handle, connection) in connections.sorted(by: { $0.key < $1.key }) where connection.tagIndex == tagIndex {
                connections[handle]?.tagIndex = nil
                connections[handle]?.nextRSSI = nil
                actions.append(.disconnect(handle: handle))
            }
        }
        reconcile(now: now, into: &actions)
        return actions
    }

    // MARK: Events

    /// LE (Enhanced) Connection Complete.
    public mutating func connectionCompleted(status: HCIStatus, handle: UInt16, role: LEConnectionComplete.Role = .central,
                                             peerAddress: BluetoothAddress, peerAddressType: AddressType,
                                             tagIndex resolvedTag: Int? = nil, now: Instant) -> [ConnectAction] {
        var actions: [ConnectAction] = []
        // Only our own initiating ends with a central-role completion (or a failure).
        if role == .central || status != .success {
            initiatingEnded(now: now, into: &actions)
        }
        guard status == .success else {
            reconcile(now: now, into: &actions)
            return actions
        }
        // A central connected to our connectable advertising (enrolment) is never a tag's
        // link: it only counts against the connection limit, and is not disconnected.
        let tagIndex = role == .central
            ? resolvedTag ?? pending.first(where: { $0.wanted.peer.matches(peerAddress, peerAddressType) })?.index
            : nil
        var connection = Connection(tagIndex: nil, nextRSSI: nil)
        if let tagIndex, let entry = wanted[tagIndex], !isConnected(tagIndex) {
            connection.tagIndex = tagIndex
            if entry.tracked { connection.nextRSSI = now + configuration.rssiInterval }
            markServed(tagIndex)
            connections[handle] = connection
            actions.append(.connected(tagIndex: tagIndex, handle: handle))
        } else {
            connections[handle] = connection
            if role == .central {
                actions.append(.log("connection \(handle) to \(peerAddress) is no longer wanted: disconnecting"))
                actions.append(.disconnect(handle: handle))
            }
        }
        reconcile(now: now, into: &actions)
        return actions
    }

    /// Disconnection Complete.
    public mutating func disconnected(handle: UInt16, reason: HCIStatus, now: Instant) -> [ConnectAction] {
        guard let connection = connections.removeValue(forKey: handle) else { return [] }
        var actions: [ConnectAction] = []
        // A freed slot: the controller may take another connection now.
        learnedConnectionLimit = nil
        if let tagIndex = connection.tagIndex, wanted[tagIndex] != nil {
            // Straight back into the pending set; the reconcile re-arms with it.
            actions.append(.connectionLost(tagIndex: tagIndex, handle: handle, reason: reason))
        }
        reconcile(now: now, into: &actions)
        return actions
    }

    /// The end of a command the scheduler asked for: Command Complete's status for the
    /// accept-list commands and the cancel, Command Status for the create-connection.
    /// Drivers report time-outs and flushed commands as `.unspecifiedError`.
    public mutating func commandFinished(_ opcode: Opcode, status: HCIStatus, now: Instant) -> [ConnectAction] {
        var actions: [ConnectAction] = []
        switch opcode {
        case .leClearFilterAcceptList, .leAddDeviceToFilterAcceptList, .leRemoveDeviceFromFilterAcceptList:
            acceptListCommandFinished(status: status, now: now, into: &actions)
        case .leCreateConnection, .leExtendedCreateConnection:
            guard status != .success else { return [] }
            createConnectionRefused(status: status, now: now, into: &actions)
        case .leCreateConnectionCancel:
            guard case .disarming(_, let ended) = state else { return [] }
            // 0x0C: nothing was pending any more, so initiating has already ended.
            state = .disarming(cancelAnswered: true, initiatingEnded: ended || status != .success)
            finishDisarmingIfDone(now: now, into: &actions)
        default:
            return []
        }
        return actions
    }

    /// Call at `nextDeadline`: Read RSSI turns, direct and overflow rotation, scanning
    /// turns, retries after a refusal, the end of a selection change's settle.
    public mutating func timerFired(now: Instant) -> [ConnectAction] {
        var actions: [ConnectAction] = []
        for (handle, connection) in connections.sorted(by: { $0.key < $1.key }) {
            guard let due = connection.nextRSSI, due <= now, let tagIndex = connection.tagIndex else { continue }
            connections[handle]?.nextRSSI = now + configuration.rssiInterval
            actions.append(.readRSSI(handle: handle, tagIndex: tagIndex))
        }
        switch state {
        case .armed(let target, let until?) where until <= now:
            switch target {
            case .direct(let tagIndex): markServed(tagIndex)
            case .acceptList:
                // Rotation: those in the list now go to the back of the queue. Also at the
                // end of an initiating turn of a controller that cannot scan meanwhile:
                // otherwise a list that overflows there would never let the others in.
                for peer in acceptList ?? [] {
                    if let index = wanted.first(where: { $0.value.peer == peer })?.key { markServed(index) }
                }
            }
            if !capabilities.canScanWhileInitiating { takeScanningTurn = true }
            disarm(into: &actions)
        case .armed where reArmAt.map({ $0 <= now }) ?? false:
            reconcile(now: now, into: &actions)
        case .waiting(let until) where until <= now:
            state = .disarmed
            reconcile(now: now, into: &actions)
        default:
            break
        }
        return actions
    }
}
