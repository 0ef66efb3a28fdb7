import FencepostCore

/// Consecutive failed requests: how long to wait before the next try (on a schedule), and
/// whether the failures have gone on long enough to give up.
struct FailureStreak {
    let schedule: RetrySchedule
    private var count = 0
    private var since: ContinuousClock.Instant?

    init(schedule: RetrySchedule) {
        self.schedule = schedule
    }

    mutating func reset() {
        count = 0
        since = nil
    }

    /// Counts a failure and returns the schedule's delay before the next try.
    mutating func failed() -> Double {
        count += 1
        if since == nil { since = .now }
        return schedule.delay(beforeRetry: count)
    }

    /// Whether waiting `delay` more would take the streak past `limit`.
    func outlasts(_ limit: Duration, waiting delay: Double) -> Bool {
        guard let since else { return false }
        return since.duration(to: .now) + .seconds(delay) > limit
    }
}
