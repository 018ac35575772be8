/// One person with an open visit, for `status`.
public struct OpenVisitSnapshot: Hashable, Sendable {
    public var personId: String
    /// `PRESENT` or `UNCONFIRMED`.
    public var state: String
    /// Wall-clock milliseconds of the visit's start.
    public var sinceMillis: Int64?
    /// The filtered RSSI now (dBm); nil when the window holds too few samples.
    public var rssi: Int?
    public var tag: String?
    public var proven: Bool

    public init(personId: String, state: String, sinceMillis: Int64?, rssi: Int?, tag: String?, proven: Bool) {
        self.personId = personId
        self.state = state
        self.sinceMillis = sinceMillis
        self.rssi = rssi
        self.tag = tag
        self.proven = proven
    }
}
