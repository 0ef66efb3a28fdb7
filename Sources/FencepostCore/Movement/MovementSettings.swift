/// How stops and trips are told apart, without any region: the same noise model as the monitor
/// (accuracy-aware, held in time, tolerant of sparse traces).
public struct MovementSettings: Sendable, Hashable, Codable {
    /// Metres from a stop's centre within which a fix is still at the stop. A fix's reported
    /// accuracy (up to this much again) is credited: a fix whose accuracy circle reaches the
    /// radius counts as at the stop.
    public var radius: Double
    /// Metres from the centre within which a fix is near it (a quarter of the radius): a stop
    /// begins at its first fix near the centre and ends at its last, so the way to and from it
    /// is the trip's, not the stop's.
    public var core: Double { radius / 4 }
    /// Seconds a device must stay for its stay to be a stop (a red light, a walk across a
    /// square are not).
    public var minDuration: Double
    /// Metres per second a stay may drift, from its first fix near the centre to its latest,
    /// and still be a stop: a stroll about a market is one, a slow walk across a square is not.
    public var stopSpeed: Double
    /// Seconds of outside fixes (two at least) that confirm a departure. One fix away between
    /// fixes at the stop is noise, on any sampling rate.
    public var leaveDelay: Double
    /// Fixes farther apart than this many seconds end a trip at the fix before the gap. A gap
    /// never ends a stop when the fix after it is at the stop: a phone at home reports less (or
    /// falls silent for a night, or a week), and is still at home.
    public var maxGap: Double
    /// Fixes with a reported accuracy worse than this many metres are ignored and counted.
    public var maxAccuracy: Double

    /// Defaults chosen against Google's own place visits (tools/bench/stops): 200 m (Google's
    /// own trip ends lie a median 87 m and a 90th percentile 224 m from the place it names, so
    /// 100 m splits what it calls one visit), 3 min (its shortest visits last 3 minutes), 60 s
    /// to leave, 0.5 m/s of drift, 12 h of silence in a trip, fixes worse than 500 m ignored.
    public init(
        radius: Double = 200, minDuration: Double = 180, stopSpeed: Double = 0.5, leaveDelay: Double = 60,
        maxGap: Double = 12 * 3600, maxAccuracy: Double = 500
    ) {
        self.radius = radius
        self.minDuration = minDuration
        self.stopSpeed = stopSpeed
        self.leaveDelay = leaveDelay
        self.maxGap = maxGap
        self.maxAccuracy = maxAccuracy
    }
}
