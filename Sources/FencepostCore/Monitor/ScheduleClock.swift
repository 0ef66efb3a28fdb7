import Foundation

/// A change of a region's activity: a period of its schedule starts or ends.
struct ScheduleBoundary: Equatable {
    var time: Double
    var starts: Bool
}

/// How a region's schedule stands over the time from one fix to the next.
enum ScheduleActivity {
    /// Active throughout.
    case active
    /// Inactive throughout.
    case inactive
    /// Periods start or end in between (in time order).
    case changes([ScheduleBoundary])
}

/// A region's schedule as instants: its periods (each `[start, end)`, overlapping and touching
/// ones merged) worked out for a span of days at a time and kept for the next fixes.
///
/// Local times are exact across daylight-saving changes: a local time is the earliest instant
/// whose wall clock reads it (a repeated hour counts once, the first time round), and a local
/// time the change skips is the first instant after the skip. Holds a cache: one clock per
/// monitor, like the monitor's GEOS state.
final class ScheduleClock {
    private let schedule: RegionSchedule
    private let zone: TimeZone
    private let excepted: Set<Int>
    /// Merged periods, ascending; complete within `window`.
    private var periods: [Range<Double>] = []
    private var window: ClosedRange<Double>?

    /// How far ahead of the time asked for the periods are worked out, and how far the next
    /// boundary is looked for.
    static let lookahead = 14 * 86_400.0

    /// Nil when the system's zone database does not know the schedule's zone.
    init?(_ schedule: RegionSchedule) {
        guard let zone = TimeZone(identifier: schedule.timeZone) else { return nil }
        self.schedule = schedule
        self.zone = zone
        self.excepted = Set(schedule.except.map(\.day))
    }

    func isActive(at time: Double) -> Bool {
        cover(time, time)
        return period(containing: time) != nil
    }

    /// How the schedule stands from `previous` (exclusive; nil: no earlier fix) to `time`.
    func activity(from previous: Double?, to time: Double) -> ScheduleActivity {
        if let previous, previous < time {
            let changes = boundaries(after: previous, through: time)
            if !changes.isEmpty { return .changes(changes) }
        }
        return isActive(at: time) ? .active : .inactive
    }

    /// The starts and ends in `(start, end]`, in time order.
    func boundaries(after start: Double, through end: Double) -> [ScheduleBoundary] {
        cover(start, end)
        var found: [ScheduleBoundary] = []
        var index = firstPeriod(endingAfter: start)
        while index < periods.count, periods[index].lowerBound <= end {
            let period = periods[index]
            if period.lowerBound > start { found.append(ScheduleBoundary(time: period.lowerBound, starts: true)) }
            if period.upperBound <= end { found.append(ScheduleBoundary(time: period.upperBound, starts: false)) }
            index += 1
        }
        return found
    }

    /// The first start or end after `time`, or `time + lookahead` when none comes before.
    func nextBoundary(after time: Double) -> Double {
        let horizon = time + Self.lookahead
        return boundaries(after: time, through: horizon).first?.time ?? horizon
    }

    // MARK: - Periods

    private func period(containing time: Double) -> Range<Double>? {
        let index = firstPeriod(endingAfter: time)
        guard index < periods.count, periods[index].contains(time) else { return nil }
        return periods[index]
    }

    /// The index of the first period whose end is after `time`.
    private func firstPeriod(endingAfter time: Double) -> Int {
        periods.partitionPoint { $0.upperBound > time }
    }

    /// Makes `periods` complete from `start` to `end`.
    private func cover(_ start: Double, _ end: Double) {
        if let window, window.contains(start), window.contains(end) { return }
        let from = start - 86_400
        let through = max(end, start) + Self.lookahead
        // A period lasts at most a day and an hour and local time is within a day of UTC: the
        // periods of the days three either side of the window's are every period that reaches
        // into it, and a merged run cut short at the days' edge ends outside it.
        let firstDay = localDay(of: from) - 3
        let lastDay = localDay(of: through) + 3
        var found: [Range<Double>] = []
        for day in firstDay...lastDay where !excepted.contains(day) {
            let weekday = LocalDate(day: day).weekday
            let midnight = Double(day) * 86_400
            for rule in schedule.weekly where rule.days.contains(weekday) {
                let startsAt = instant(local: midnight + Double(rule.from) * 60)
                let endsAt = instant(local: midnight + Double(rule.from + rule.minutes) * 60)
                if endsAt > startsAt { found.append(startsAt..<endsAt) }
            }
        }
        found.sort { $0.lowerBound < $1.lowerBound }
        var merged: [Range<Double>] = []
        for period in found {
            if let last = merged.last, period.lowerBound <= last.upperBound {
                merged[merged.count - 1] = last.lowerBound..<max(last.upperBound, period.upperBound)
            } else {
                merged.append(period)
            }
        }
        periods = merged
        window = from...through
    }

    private func offset(at time: Double) -> Double {
        Double(zone.secondsFromGMT(for: Date(timeIntervalSince1970: time)))
    }

    /// The local date's day number; held to ±10⁹ days (and 0 for a time that is no number), so
    /// no time the monitor is handed can trap the conversion.
    private func localDay(of time: Double) -> Int {
        let day = ((time + offset(at: time)) / 86_400).rounded(.down)
        guard day.isFinite else { return 0 }
        return Int(min(max(day, -1e9), 1e9))
    }

    /// The earliest instant whose wall clock reads `local` (seconds of local time, counted as
    /// if it were UTC); for a local time a change skips, the first instant after the change.
    func instant(local: Double) -> Double {
        // The offsets a day either side: every offset the local time can have.
        let before = offset(at: local - 86_400)
        let after = offset(at: local + 86_400)
        let valid = [before, after].map { local - $0 }.filter { local - offset(at: $0) == $0 }
        if let earliest = valid.min() { return earliest }
        // Skipped: the change lies between the two readings; find its first second.
        var low = local - max(before, after)
        var high = local - min(before, after)
        let lowOffset = offset(at: low)
        while high - low > 1 {
            let middle = ((low + high) / 2).rounded(.down)
            if offset(at: middle) == lowOffset { low = middle } else { high = middle }
        }
        return high
    }
}
