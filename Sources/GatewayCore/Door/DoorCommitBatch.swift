import AttendanceEvents

/// Events and the presence records that go with them: stored together or not at all.
public struct DoorCommitBatch: Hashable, Sendable {
    /// In decision order; `sequence` is 0: the store allocates it and the body is rendered
    /// with it (`AttendanceEvent.jsonBody`).
    public var events: [AttendanceEvent]
    public var records: [DoorRecordWrite]

    public init(events: [AttendanceEvent], records: [DoorRecordWrite]) {
        self.events = events
        self.records = records
    }
}
