import EventLoop
import HCI

extension ConnectScheduler {
    /// How an armed request stands against the wanted set.
    enum ArmedFit {
        case fits
        /// Every tag in the accept list is still wanted and unconnected; only who else
        /// should be in it changed (arrivals, or a fairer order). The request still serves
        /// wanted tags, so it may wait out `selectionSettle`.
        case selectionChanged
        /// The request must go now: the connection limit is reached, or it could connect
        /// a tag that is unwanted, already connected, or no longer at that address.
        case unfit
    }

    /// Brings the controller in line with the wanted set: arms when disarmed, disarms
    /// when an armed request no longer fits, or, when only the selection changed, once
    /// the request has been armed for `selectionSettle`. Called after every input.
    mutating func reconcile(now: Instant, into actions: inout [ConnectAction]) {
        switch state {
        case .unavailable, .arming, .disarming, .waiting:
            return
        case .armed(let target, let turnEnds):
            switch armedFit(target) {
            case .fits:
                reArmAt = nil
            case .unfit:
                disarm(into: &actions)
            case .selectionChanged where turnEnds != nil && (acceptList?.count ?? 0) >= effectiveCapacity:
                // A full list whose turn ends soon: who else should be in it waits for the
                // turn (at most `acceptListRotation`) instead of swapping entries for every
                // arrival at a crowded door, a cancel, list edits and a create each time.
                reArmAt = nil
            case .selectionChanged:
                let settled = armedAt + configuration.selectionSettle
                if settled <= now {
                    disarm(into: &actions)
                } else {
                    reArmAt = settled
                }
            }
        case .disarmed:
            arm(now: now, into: &actions)
        }
    }

    private func armedFit(_ target: Target) -> ArmedFit {
        guard connections.count < connectionLimit, !initiationPaused else { return .unfit }
        switch target {
        case .acceptList:
            let pending = self.pending
            let selection = self.selection(of: pending)
            guard !selection.isEmpty, let acceptList else { return .unfit }
            if selection == acceptList { return .fits }
            return acceptList.isSubset(of: pending.map(\.wanted.peer)) ? .selectionChanged : .unfit
        case .direct(let tagIndex):
            return wanted[tagIndex] != nil && !isConnected(tagIndex) ? .fits : .unfit
        }
    }

    private mutating func arm(now: Instant, into actions: inout [ConnectAction]) {
        let pending = self.pending
        guard !pending.isEmpty, connections.count < connectionLimit, !initiationPaused else {
            resumeScanningIfPaused(into: &actions)
            return
        }
        switch configuration.mode {
        case .direct:
            let next = pending[0]
            pauseScanningIfNeeded(into: &actions)
            actions.append(.createConnection(direct: next.wanted.peer))
            enterArmed(.direct(tagIndex: next.index), until: now + turnLength(configuration.directRotation), now: now)
        case .acceptList:
            var updates: [ConnectAction] = []
            let selection = self.selection
            let list = acceptList ?? []
            var removals = list.subtracting(selection)
            var additions = selection.subtracting(list)
            // Clearing and refilling when that takes fewer commands than removing and
            // adding entry by entry (a turn that swaps all 16 entries: 17, not 32).
            if acceptList == nil || 1 + selection.count < removals.count + additions.count {
                updates.append(.clearAcceptList)
                removals = []
                additions = selection
            }
            for peer in removals.sorted(by: Self.order) {
                updates.append(.removeFromAcceptList(peer))
            }
            for peer in additions.sorted(by: Self.order) {
                updates.append(.addToAcceptList(peer))
            }
            if updates.isEmpty {
                pauseScanningIfNeeded(into: &actions)
                actions.append(.createConnectionFromAcceptList)
                // No timer unless one request cannot serve everyone (or scanning needs its turn).
                let until: Instant? = overflows
                    ? now + turnLength(configuration.acceptListRotation)
                    : (capabilities.canScanWhileInitiating ? nil : now + configuration.alternation)
                enterArmed(.acceptList, until: until, now: now)
            } else {
                // Optimistic: the list as it will be; failures are taken back one by one.
                acceptList = selection
                armingListCount = selection.count
                actions.append(contentsOf: updates)
                state = .arming(outstanding: updates.count)
            }
        }
    }

    private mutating func enterArmed(_ target: Target, until: Instant?, now: Instant) {
        armedAt = now
        reArmAt = nil
        state = .armed(target, until: until)
    }

    private func turnLength(_ rotation: Duration) -> Duration {
        capabilities.canScanWhileInitiating ? rotation : min(rotation, configuration.alternation)
    }

    static func order(_ lhs: ConnectPeer, _ rhs: ConnectPeer) -> Bool {
        (lhs.address, lhs.addressType.rawValue) < (rhs.address, rhs.addressType.rawValue)
    }

    mutating func disarm(into actions: inout [ConnectAction]) {
        actions.append(.cancelCreateConnection)
        reArmAt = nil
        state = .disarming(cancelAnswered: false, initiatingEnded: false)
    }

    /// Connection Complete (any status) or a refused create-connection: the controller
    /// is not initiating any more.
    mutating func initiatingEnded(now: Instant, into actions: inout [ConnectAction]) {
        switch state {
        case .armed:
            afterInitiating(now: now, into: &actions)
        case .disarming(let answered, _):
            state = .disarming(cancelAnswered: answered, initiatingEnded: true)
            finishDisarmingIfDone(now: now, into: &actions)
        default:
            break
        }
    }

    mutating func finishDisarmingIfDone(now: Instant, into actions: inout [ConnectAction]) {
        guard case .disarming(true, true) = state else { return }
        afterInitiating(now: now, into: &actions)
        reconcile(now: now, into: &actions)
    }

    private mutating func afterInitiating(now: Instant, into actions: inout [ConnectAction]) {
        if takeScanningTurn || (scanningPaused && !capabilities.canScanWhileInitiating) {
            takeScanningTurn = false
            resumeScanningIfPaused(into: &actions)
            state = .waiting(until: now + configuration.alternation)
        } else {
            state = .disarmed
        }
    }

    mutating func acceptListCommandFinished(status: HCIStatus, now: Instant, into actions: inout [ConnectAction]) {
        guard case .arming(let outstanding) = state else { return }
        if status != .success {
            // Which entry failed is not in the answer; the list is no longer known for
            // certain, so the next arming starts from a clear list. A full list (0x07)
            // also shrinks the capacity used from now on.
            if status == .memoryCapacityExceeded || status == .limitedResources {
                // From the list this arming meant to build, not from what is known now: an
                // earlier failure of the same arming (a refused clear, say, and then every
                // addition refused as full) must not shrink the capacity to one entry.
                let known = max(1, armingListCount - 1)
                acceptListCapacity = acceptListCapacity > 0 ? min(acceptListCapacity, known) : known
                actions.append(.log("accept list full (status \(status)): using \(acceptListCapacity) entries"))
            } else {
                actions.append(.log("accept list update failed with status \(status)"))
            }
            acceptList = nil
        }
        if outstanding > 1 {
            state = .arming(outstanding: outstanding - 1)
            return
        }
        state = .disarmed
        if acceptList == nil {
            // Clear and refill once; wait a little so a persistent failure cannot spin.
            state = .waiting(until: now + configuration.retryAfterRefusal)
            return
        }
        reconcile(now: now, into: &actions)
    }

    mutating func createConnectionRefused(status: HCIStatus, now: Instant, into actions: inout [ConnectAction]) {
        if case .disarming(let answered, _) = state {
            state = .disarming(cancelAnswered: answered, initiatingEnded: true)
            finishDisarmingIfDone(now: now, into: &actions)
            return
        }
        guard case .armed = state else { return }
        resumeScanningIfPaused(into: &actions)
        if (status == .limitedResources || status == .connectionLimitExceeded), !connections.isEmpty {
            learnedConnectionLimit = connections.count
            actions.append(.log("controller refused another connection (status \(status)): at most \(connections.count) at once until one ends"))
            state = .disarmed
            return
        }
        actions.append(.log("create-connection refused with status \(status): retrying in \(configuration.retryAfterRefusal)"))
        state = .waiting(until: now + configuration.retryAfterRefusal)
    }

    private mutating func pauseScanningIfNeeded(into actions: inout [ConnectAction]) {
        guard !capabilities.canScanWhileInitiating, !scanningPaused else { return }
        scanningPaused = true
        actions.append(.pauseScanning(reason: "controller cannot scan while initiating"))
    }

    private mutating func resumeScanningIfPaused(into actions: inout [ConnectAction]) {
        guard scanningPaused else { return }
        scanningPaused = false
        actions.append(.resumeScanning)
    }

    mutating func markServed(_ tagIndex: Int) {
        serveCounter &+= 1
        wanted[tagIndex]?.served = serveCounter
    }
}
