/// What a timeline shows: visits as bars per region over time, and health events as rows of
/// their own. Gathered by the caller, drawn by ``TimelineRenderer``.
package struct TimelineScene: Sendable {
    package var visits: [MapVisit]
    /// Each device's last fix time: open visits run to it.
    package var lastFix: [String: Double]
    /// Region names by id, for the row labels.
    package var regionNames: [String: String]
    package var health: [HealthBar]
    /// The time window asked for (seconds since the epoch); nil ends follow the content.
    package var since: Double?
    package var until: Double?
    package var caption: String?

    package init(
        visits: [MapVisit] = [], lastFix: [String: Double] = [:], regionNames: [String: String] = [:],
        health: [HealthBar] = [],
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
package struct HealthBar: Sendable, Hashable {
    /// The row it goes in: `steps`, `sleep` or `workout`.
    package var row: String
    package var eventID: String
    /// Seconds since the epoch.
    package var start: Double
    package var end: Double
    /// The day's total (steps), scaling the bar's shade; nil for others.
    package var value: Double?
    /// What the bar says when there is room (a step count, a workout type).
    package var label: String

    package init(row: String, eventID: String, start: Double, end: Double, value: Double? = nil, label: String) {
        self.row = row
        self.eventID = eventID
        self.start = start
        self.end = end
        self.value = value
        self.label = label
    }
}
