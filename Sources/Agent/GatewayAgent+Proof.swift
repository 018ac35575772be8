import Config
import EventLoop
import GatewayCore
import HCI
import Host
import Store

/// Proofs and connections in the door agent (see docs/proof-protocol.md,
/// docs/persistent-connect.md): which tags are wanted for a
/// connection, the handshake on each new one, the proof book, and what the outcomes mean
/// for presence, the LEDs and the event log.
final class ProofSupport {
    struct TagInfo {
        var tagId: String
        var personId: String
        var requireProof: Bool
        var tracked: Bool
        var key: TagKey?
        /// From the configuration (an `address` identity); else learnt from advertisements.
        var configuredPeer: ConnectPeer?
    }

    let connect: ConnectLink
    let dataPath: DataPathLink
    let runner: ProofRunner
    var book = ProofBook()
    /// Only tags that can ever need a connection, by matcher tag index.
    var tags: [Int: TagInfo]
    var tagIndexById: [String: Int] = [:]
    /// Which of them want a connection now, kept up to date as reports and decisions come.
    var wishes: ConnectionWishes

    init(connect: ConnectLink, dataPath: DataPathLink, runner: ProofRunner, tags: [Int: TagInfo]) {
        self.connect = connect
        self.dataPath = dataPath
        self.runner = runner
        self.tags = tags
        wishes = ConnectionWishes(tags: Self.wishTags(tags))
        for (index, tag) in tags { tagIndexById[tag.tagId] = index }
    }

    static func wishTags(_ tags: [Int: TagInfo]) -> [Int: ConnectionWishes.Tag] {
        tags.mapValues { tag in
            ConnectionWishes.Tag(tagId: tag.tagId, personId: tag.personId, requireProof: tag.requireProof, tracked: tag.tracked,
                                 hasKey: tag.key != nil, configuredPeer: tag.configuredPeer)
        }
    }

    /// The tags that may need a connection, from the configuration. A `require_proof`
    /// tag without a key (none of its own, no master key) is left out: it can never prove.
    static func tags(_ configuration: GatewayConfiguration) -> [Int: TagInfo] {
        let master = configuration.security.masterKey.flatMap { MasterKey(bytes: $0) }
        var result: [Int: TagInfo] = [:]
        var index = 0
        for person in configuration.persons {
            for tag in person.tags {
                defer { index += 1 }
                let tracked = tag.track == .connection
                guard person.requireProof || tracked else { continue }
                let key = tag.key.flatMap { TagKey(bytes: $0) } ?? master.map { TagKey.derive(masterKey: $0, tagId: tag.id) }
                var peer: ConnectPeer?
                for case .address(let address) in tag.identities {
                    // A guess until the tag is heard: static random addresses have 0b11 on top.
                    peer = ConnectPeer(address: address, addressType: AddressType.guess(for: address))
                    break
                }
                result[index] = TagInfo(tagId: tag.id, personId: person.id, requireProof: person.requireProof,
                                        tracked: tracked, key: key, configuredPeer: peer)
            }
        }
        return result
    }
}

extension GatewayAgent {
    /// Wires connections and proofs onto the link, before `link.start()`: the data path
    /// registers its listeners first, then the connect scheduler (see `ConnectLink`).
    func startProofs(_ link: ControllerLink) {
        let tags = ProofSupport.tags(configuration)
        guard !tags.isEmpty else { return }
        let b = configuration.bluetooth
        let connect = ConnectLink(
            link: link,
            configuration: ConnectScheduler.Configuration(mode: b.connectMode == .direct ? .direct : .acceptList,
                                                          maxConnections: b.maxConnections),
            activeScanning: b.scan == .active
        )
        let dataPath = DataPathLink(link: link)
        let runner = ProofRunner(dataPath: dataPath)
        dataPath.attach()
        connect.attach()
        let support = ProofSupport(connect: connect, dataPath: dataPath, runner: runner, tags: tags)
        proofs = support
        connect.onLog = { [unowned self] message in self.log.log(.info, message) }
        connect.onConnected = { [unowned self] tagIndex, handle, now in self.connected(tagIndex: tagIndex, handle: handle, at: now) }
        connect.onConnectionLost = { [unowned self] tagIndex, handle, reason, now in
            self.connectionLost(tagIndex: tagIndex, handle: handle, reason: reason, at: now)
        }
        connect.onRSSI = { [unowned self] tagIndex, _, rssi, now in self.connectionRSSI(tagIndex: tagIndex, rssi: rssi, at: now) }
        runner.onFinished = { [unowned self] outcome in self.proofFinished(outcome) }
        log.log(.info, "connections", ["tags": "\(tags.count)", "mode": b.connectMode.rawValue,
                                       "max_connections": "\(b.maxConnections)"])
    }

    /// SIGHUP: tag indices may have moved, so every wish is decided afresh from the new
    /// configuration (the proof book, keyed by tag id, is kept).
    func reloadProofs() {
        guard let link else { return }
        guard let proofs else {
            startProofs(link)
            return
        }
        // Unwanted first: a moved index must not keep the connection of the tag it was.
        for tagIndex in proofs.wishes.wanted.keys.sorted() { proofs.connect.unwant(tagIndex: tagIndex) }
        proofs.tags = ProofSupport.tags(configuration)
        proofs.wishes = ConnectionWishes(tags: ProofSupport.wishTags(proofs.tags))
        proofs.tagIndexById = Dictionary(proofs.tags.map { ($0.value.tagId, $0.key) }, uniquingKeysWith: { first, _ in first })
        proofs.book.retain(tags: Set(proofs.tags.values.map(\.tagId)))
        updateWantedConnections(at: loop.now)
    }

    /// Advertisement of a tag that may need a connection: remember where it is.
    func heardForConnection(tagIndex: Int, address: BluetoothAddress, addressType: AddressType) {
        proofs?.wishes.heard(tagIndex: tagIndex, address: address, addressType: addressType)
    }

    /// Brings the connect scheduler's wanted set in line with presence and the proof book,
    /// for the tags whose wish may have changed since the last call.
    func updateWantedConnections(at now: Instant) {
        guard let proofs, proofs.wishes.hasPending else { return }
        for change in proofs.wishes.update(presence: presence, book: proofs.book, now: now) {
            switch change {
            case let .want(tagIndex, peer, tracked): proofs.connect.want(tagIndex: tagIndex, peer: peer, tracked: tracked)
            case let .unwant(tagIndex): proofs.connect.unwant(tagIndex: tagIndex)
            }
        }
    }

    func connected(tagIndex: Int, handle: UInt16, at now: Instant) {
        guard let proofs, let tag = proofs.tags[tagIndex] else { return }
        log.log(.debug, "connected", ["tag": tag.tagId, "handle": "\(handle)"])
        guard tag.requireProof, let key = tag.key, presence.wantsProof(tagIndex: tagIndex, at: now),
              proofs.book.mayAttempt(tag: tag.tagId, now: now) else {
            if !tag.tracked { proofs.dataPath.disconnect(handle) }
            return
        }
        let connectDuration = proofs.connect.lastCreateConnectionAt.map { now - $0 }
        proofs.runner.start(handle: handle, tag: tag.tagId, key: key, cachedHandles: proofs.book.cachedHandles(tag: tag.tagId),
                            connectDuration: connectDuration, now: now)
    }

    func connectionLost(tagIndex: Int, handle connectionHandle: UInt16, reason: HCIStatus, at now: Instant) {
        guard let proofs, let tag = proofs.tags[tagIndex], tag.tracked else { return }
        log.log(.info, "link lost", ["tag": tag.tagId, "person_id": tag.personId, "reason": "\(reason)"])
        let events = presence.linkLost(tagIndex: tagIndex, at: now)
        changedPersons.insert(tag.personId)
        proofs.wishes.personChanged(tag.personId)
        if !events.isEmpty { handle(events, at: now) }
        armPresenceTimer()
        // Straight back into the pending set (the scheduler already re-armed with it).
        updateWantedConnections(at: now)
    }

    func connectionRSSI(tagIndex: Int, rssi: Int, at now: Instant) {
        guard let proofs, let tag = proofs.tags[tagIndex], let peer = tag.configuredPeer ?? proofs.wishes.lastPeer[tagIndex] else { return }
        let events = presence.sample(tagIndex: tagIndex, rssi: rssi, address: peer.address, addressType: peer.addressType,
                                     txPower: nil, at: now)
        heardPersons.insert(tag.personId)
        heardSinceCheckpoint = true
        if !events.isEmpty { handle(events, at: now) }
        armPresenceTimer()
    }

    func proofFinished(_ outcome: ProofOutcome) {
        guard let proofs, let tagIndex = proofs.tagIndexById[outcome.tag], let tag = proofs.tags[tagIndex] else { return }
        let now = outcome.finishedAt
        if outcome.ok { fleet.counters.proofsOK &+= 1 } else { fleet.counters.proofsFailed &+= 1 }
        proofs.wishes.personChanged(tag.personId)
        log.log(outcome.ok ? .info : .warning, "proof", [
            "tag": outcome.tag, "person_id": tag.personId, "ok": "\(outcome.ok)",
            "rt_ms": "\(outcome.roundTripMilliseconds)", "att": "\(outcome.attRoundTrips)",
            "cache": "\(outcome.usedCachedHandles)", "failure": outcome.failure?.name ?? "-",
        ])
        if outcome.ok, let handles = outcome.handles {
            proofs.book.recordSuccess(tag: outcome.tag, handles: handles, roundTripMilliseconds: outcome.roundTripMilliseconds, now: now)
            let events = presence.proofSucceeded(tagIndex: tagIndex, at: now, roundTripMilliseconds: outcome.roundTripMilliseconds)
            changedPersons.insert(tag.personId)
            if !events.isEmpty { handle(events, at: now) }
        } else if let failure = outcome.failure {
            presence.proofFailed(tagIndex: tagIndex, at: now)
            leds?.update { engine, now in engine.proofFailed(at: now) }
            // A controller reset is nobody's fault: not counted towards a lockout.
            if case .controllerReset = failure {
            } else if case .lockedOut(let since, let until) = proofs.book.recordFailure(tag: outcome.tag, reason: failure, now: now) {
                presence.tagLockedOut(tagIndex: tagIndex, until: until)
                log.log(.warning, "spoof suspected: tag locked out", ["tag": outcome.tag, "person_id": tag.personId,
                                                                     "until_s": "\(Int((until - since).nanosecondsClamped / 1_000_000_000))"])
                commitSpoofSuspected(tagIndex: tagIndex, tag: tag, since: since, roundTripMilliseconds: outcome.roundTripMilliseconds)
            }
        }
        armPresenceTimer()
        updateWantedConnections(at: now)
    }

    /// `spoof_suspected` (see docs/event-api.md), once per lockout; its visit start is the lockout's start.
    func commitSpoofSuspected(tagIndex: Int, tag: ProofSupport.TagInfo, since: Instant, roundTripMilliseconds: Int) {
        guard let store else { return }
        let wall = presence.wallClock.wallMilliseconds(at: since)
        let identities = tagIndex < identitiesByTagIndex.count ? identitiesByTagIndex[tagIndex] : []
        let address = proofs?.wishes.lastPeer[tagIndex]?.address ?? tag.configuredPeer?.address ?? BluetoothAddress(rawValue: 0)
        let probe = AttendanceEvent(
            id: EventIdentifier.uuidV4(), sequence: 0, type: .spoofSuspected, userId: tag.personId, gateway: gatewayIdentity,
            timestampMilliseconds: wall, decidedAtMilliseconds: wall, visitStartMilliseconds: wall,
            beacon: BeaconInfo(tag: tag.tagId, address: address, identities: identities), rssiSeries: [], txPower: nil,
            handshake: PresenceDecision.Handshake(ok: false, roundTripMilliseconds: max(0, roundTripMilliseconds)), appVersion: options.appVersion
        )
        var committed: AttendanceEvent?
        do {
            try store.commit { transaction throws(StoreError) in
                _ = try transaction.appendEvent(
                    idempotencyKey: probe.idempotencyKey, type: probe.type.rawValue, personId: tag.personId, createdAtMillis: wall
                ) { sequence in
                    var event = probe
                    event.sequence = sequence
                    event.clockSynced = clockSynchronisedNow()
                    committed = event
                    return Array(event.jsonBody().utf8)
                }
            }
        } catch {
            counters.commitFailures += 1
            log.log(.error, "cannot store spoof_suspected", ["person_id": tag.personId, "error": error.description])
            storeFailed(error)
            return
        }
        storeSucceeded()
        guard let committed else { return }
        log.log(.notice, committed.type.rawValue, [
            "event": committed.type.rawValue, "person_id": committed.userId, "tag": tag.tagId, "sequence": "\(committed.sequence)",
        ])
        forwarder?.kick()
    }
}
