/// What a timeline shows: visits as bars per region over time, and health events as rows of
/// their own. Gathered by the caller, drawn by ``TimelineRenderer``.
public struct TimelineScene: Sendable {
    public var visits: [MapVisit]
    /// Each device's last fix time: open visits run to it.
    public var lastFix: [String: Double]
    /// Region names by id, for the row labels.
    public var regionNames: [String: String]
    public var health: [HealthBar]
    /// The time window asked for (seconds since the epoch); nil ends follow the content.
    public var since: Double?
    public var until: Double?
    public var caption: String?

    public init(
        visits: [MapVisit] = [], lastFix: [String: Double] = [:], regionNames: [String: String] = [:], health: [HealthBar] = [],
        since: Double? = nil, until: Double? = nil, caption: String? = nil
    ) {
        self.visits = visits
        self.lastFix = lastFix
        self.regionNames = regionNames
        self.health = health
        self.since = since
        self.until = until
        self.caption = caption
    }

    /// When an open visit's bar ends: the device's last fix, else the window's end.
    func end(of visit: MapVisit) -> Double {
        visit.exitedAt ?? max(lastFix[visit.device] ?? until ?? visit.enteredAt, visit.enteredAt)
    }
}

/// A health event as a bar: a day's steps, a night's sleep, a workout.
public struct HealthBar: Sendable, Hashable {
    /// The row it goes in: `steps`, `sleep` or `workout`.
    public var row: String
    public var eventID: String
    /// Seconds since the epoch.
    public var start: Double
    public var end: Double
    /// The day's total (steps), scaling the bar's shade; nil for others.
    public var value: Double?
    /// What the bar says when there is room (a step count, a workout type).
    public var label: String

    public init(row: String, eventID: String, start: Double, end: Double, value: Double? = nil, label: String) {
        self.row = row
        self.eventID = eventID
        self.start = start
        self.end = end
        self.value = value
        self.label = label
    }
}
