/// `[site]` as the door core takes it (docs/neighbours.md): which doors can hear this
/// one's people, by how much this door must lead them to take a person, and how long a
/// neighbour must lead before a present person has moved there.
public struct NeighbourSetup: Hashable, Sendable {
    public var neighbours: NeighbourList
    /// `margin_db`.
    public var marginDB: Double
    /// `handover_s`.
    public var handover: Duration
    /// From the site master key.
    public var keys: SightingKeys

    public init(neighbours: NeighbourList, marginDB: Double = 6.0, handover: Duration = .seconds(5), keys: SightingKeys) {
        self.neighbours = neighbours
        self.marginDB = marginDB
        self.handover = handover
        self.keys = keys
    }

    // The fixed times of the rule (docs/neighbours.md).

    /// A sighting counts while at most this old.
    public static let freshness: Duration = .seconds(3)
    /// A neighbour not heard (sighting or heartbeat) for this long is silent.
    public static let silence: Duration = .seconds(10)
    /// Nobody leads by the margin: this door takes a person after being the strongest,
    /// above `enter_rssi`, for this long.
    public static let strongestAlone: Duration = .seconds(10)
    /// A door that has just started waits at most this long for its neighbours before its
    /// first checkin.
    public static let startWait: Duration = .seconds(2)
    /// A lead by the margin must last this long before a person nobody holds is taken:
    /// a person walking past this doorway into the room next door leads here for a moment,
    /// until the neighbour's reports catch up with them.
    public static let confirm: Duration = .seconds(3)
    /// Whether this door is the strongest (for a person nobody holds and nobody leads by
    /// the margin) is judged on its lead smoothed over this long: a lead of a few dB at a
    /// seat by the wall changes sign on one report's noise, and would start the 10 s over.
    public static let leadSmoothing: Duration = .seconds(3)
    /// A neighbour's lead over this door that has reached the margin (the start of a
    /// `moved` checkout's time) goes on counting while it stays within this much of it
    /// (dB). This door's own leads need the whole margin throughout, but for a mover whose
    /// passage through this doorway is confirmed: their lead over the neighbours' latest
    /// sightings goes on within this much of the margin too (one report's noise is about
    /// 2 dB).
    public static let leadHysteresisDB = 3
    /// A person this door has led by the margin plus this much (dB), against the
    /// neighbours' latest sightings, came in through this door's doorway: a seat across
    /// the wall never gives that lead (the wall's loss is against it).
    public static let doorwayLeadDB = 6
    /// A person passing through this door's doorway is heard at least this much above
    /// `enter_rssi` (dB).
    public static let doorwayAboveEnterDB = 10
    /// A passage heard this much above `enter_rssi` (dB) on this door's median, by a door
    /// that was not the strongest within the last `leadSmoothing`, is confirmed without a
    /// second report: only the doorway, a metre or two from the gateway, gives such a
    /// level; a seat across the wall is 10 dB or more below it, and one advertisement's
    /// fading does not move a median that far.
    public static let doorwayStrongAboveEnterDB = 16
    /// For this long after, a person a neighbour holds is taken here by the margin over
    /// the neighbours' latest sightings for `handover_s`, or as the strongest against them
    /// for `strongestAlone` (docs/neighbours.md, "The rule").
    public static let doorwayMemory: Duration = .seconds(30)
    /// A door reports what it hears this often.
    public static let reportPeriod: Duration = .seconds(1)
    /// A checkin here is reported at once, but never sooner than this after the report
    /// before (a burst of checkins makes at most five reports a second besides the
    /// periodic one).
    public static let checkinReportGap: Duration = .milliseconds(200)
    /// Two of a neighbour's reports made at least this far apart are two looks at a
    /// person (a report period, less its jitter); closer, the second is a checkin's report
    /// whose median is over nearly the same samples.
    public static let secondLookAfter: Duration = .milliseconds(800)
    /// A person is reported while heard above `exit_rssi` minus this (dB).
    public static let reportBelowExitDB = 10
    /// The steady levels (the holder's reports of a person, this door's own signal) are
    /// means over this long: minutes at a seat, not a moment of fading.
    public static let steadySpan: Duration = .seconds(30)
    /// A holder whose reports have named the person as held, without a gap of
    /// `silence`, for this long holds them steadily: a passage confirmed by two of its
    /// reports may be withdrawn (docs/neighbours.md, "The rule").
    public static let steadyHolderFor: Duration = .seconds(20)
    /// Such a passage is withdrawn when the holder's latest report is back within this
    /// much (dB) of its steady level...
    public static let holderBackWithinDB = 2
    /// ...while this door hears the person no more than this much (dB) above its own
    /// steady level when the passage was confirmed: the person did not move.
    public static let ownRiseDB = 3
}
