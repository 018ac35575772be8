/// The thresholds and timers of docs/presence.md (`[presence]`), as the engine uses them.
///
/// The configuration decodes `[presence]` straight into this type (Config depends on
/// GatewayCore, never the reverse), so the defaults here are the only ones.
public struct PresenceSettings: Hashable, Sendable {
    /// Filtered RSSI strictly above this (dBm) means at the door.
    public var enterRSSI: Int
    /// Filtered RSSI at or below this (dBm) starts the leave debounce. Lower than `enterRSSI`.
    public var exitRSSI: Int
    /// The median filter's window: samples in `(t − window, t]` count.
    public var window: Duration
    /// A filtered value needs at least this many samples in the window.
    public var minSamples: Int
    /// PRESENT with no sample for this long becomes UNCONFIRMED.
    public var lostAfter: Duration
    /// The leave debounce: UNCONFIRMED for this long emits `checkout`.
    public var leaveAfter: Duration
    /// NEARBY with no sample for this long becomes OUTSIDE.
    public var awayAfter: Duration
    /// A proof counts for a check-in while younger than this.
    public var proofTTL: Duration
    /// A valid proof whose challenge took longer than this to become the response fails
    /// as `too_slow` (`ProofTimeLimit`, docs/security.md "Relayed proofs").
    public var proofResponseLimit: Duration
    /// Samples kept per tag: the most a window can hold. A tag that advertises faster than
    /// `samplesPerTag / window` has its oldest in-window samples dropped, so the median is
    /// taken over the newest `samplesPerTag`; this is what keeps memory bounded whatever a
    /// (possibly hostile) advertiser does. Clamped to 1…``maximumSamplesPerTag``.
    public var samplesPerTag: Int

    public static let maximumSamplesPerTag = 256

    public init(enterRSSI: Int = -70, exitRSSI: Int = -75, window: Duration = .seconds(3),
                minSamples: Int = 2, lostAfter: Duration = .seconds(10),
                leaveAfter: Duration = .seconds(180), awayAfter: Duration = .seconds(60),
                proofTTL: Duration = .seconds(600), samplesPerTag: Int = 64,
                proofResponseLimit: Duration = .milliseconds(600)) {
        self.enterRSSI = enterRSSI
        self.exitRSSI = exitRSSI
        self.window = window
        self.minSamples = minSamples
        self.lostAfter = lostAfter
        self.leaveAfter = leaveAfter
        self.awayAfter = awayAfter
        self.proofTTL = proofTTL
        self.proofResponseLimit = proofResponseLimit
        self.samplesPerTag = samplesPerTag
    }

    /// `samplesPerTag` within its bounds, and never fewer than `minSamples` (else no
    /// window could ever be valid).
    var ringCapacity: Int {
        min(max(samplesPerTag, minSamples, 1), Self.maximumSamplesPerTag)
    }

    /// `minSamples` as the engine applies it: at least 1, at most what a ring holds.
    var effectiveMinSamples: Int {
        min(max(minSamples, 1), Self.maximumSamplesPerTag)
    }
}
