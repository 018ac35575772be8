import AttendanceEvents

/// An event decided and not yet stored, with what goes into its transaction.
struct DoorPendingEvent: Sendable {
    enum RecordWrite: Sendable {
        /// The person's record as it is when the batch is built (their newest state).
        case current
        /// Their record goes (a person no longer configured).
        case delete
        /// No record (spoof_suspected).
        case none
    }

    var event: AttendanceEvent
    var record: RecordWrite
    /// For the log line.
    var tagId: String
    var rssi: Int?
    var reason: String?
}

/// The events the store has not taken yet, in decision order (docs/reliability.md,
/// "Events the store refuses").
///
/// Newer events never overtake older ones: the whole queue goes to the store as one
/// batch, so either all of it is stored or none (if its head fails, nothing behind it
/// is). Bounded: at `maximumHeld` check-ins and spoof_suspected, the door holds check-ins
/// (nobody new is checked in) until the store takes the queue; checkouts of open visits
/// still queue (at most one per open visit, so bounded by the roster).
struct DoorCommitQueue: Sendable {
    static let maximumHeld = 1_000

    private(set) var items: [DoorPendingEvent] = []
    /// Queued events per person: their presence record is not checkpointed meanwhile.
    private(set) var waitingByPerson: [String: Int] = [:]
    /// Check-ins and spoof_suspected in `items` (what the bound counts).
    private(set) var heldCount = 0
    /// Events of the batch handed to the driver and not yet answered.
    var inFlight = 0
    /// The last attempt failed: wait for the retry instead of committing each new event
    /// (so order holds and a failing disk is not hammered).
    var failing = false
    /// `items` reached the bound and check-ins are held (logged once per episode).
    var fullLogged = false
    /// Failed commits, for the journal, and whether the last was disk trouble (whose
    /// lines are the agent's: these then go at debug level).
    var failureLog = RepeatedFailureLog()
    var failureIsDiskTrouble = false
    /// Spoof events refused at the bound since it was reached.
    var refusedSpoofs = 0

    var count: Int { items.count }
    var isEmpty: Bool { items.isEmpty }
    var isFull: Bool { heldCount >= Self.maximumHeld }

    func isWaiting(_ personId: String) -> Bool { waitingByPerson[personId] != nil }

    mutating func append(_ item: DoorPendingEvent) {
        items.append(item)
        waitingByPerson[item.event.userId, default: 0] += 1
        if item.event.type != .checkout { heldCount += 1 }
    }

    /// Events decided before everything queued (a stored visit's checkout found when the
    /// store first opens). Never while a batch is out: its count is the queue's head.
    mutating func prepend(_ earlier: [DoorPendingEvent]) {
        precondition(inFlight == 0 || earlier.isEmpty, "a batch is out: its items are the head of the queue")
        guard !earlier.isEmpty else { return }
        items.insert(contentsOf: earlier, at: 0)
        for item in earlier {
            waitingByPerson[item.event.userId, default: 0] += 1
            if item.event.type != .checkout { heldCount += 1 }
        }
    }

    /// Removes the first `count` items (stored) and returns them.
    mutating func removeFirst(_ count: Int) -> ArraySlice<DoorPendingEvent> {
        let done = items[..<count]
        for item in done {
            let personId = item.event.userId
            if let waiting = waitingByPerson[personId], waiting > 1 {
                waitingByPerson[personId] = waiting - 1
            } else {
                waitingByPerson[personId] = nil
            }
            if item.event.type != .checkout { heldCount -= 1 }
        }
        items.removeFirst(count)
        return done
    }
}
