import FencepostGeometry
import Foundation
import Testing

@testable import FencepostCore

/// Schedules: local times across the 2026 daylight-saving changes, and the monitor's starts and
/// ends of periods.
struct ScheduleTests {
    let grid = LocalGrid()

    /// UTC seconds of `2026-10-23T06:00:00Z`-style text.
    static func utc(_ text: String) -> Double { Timestamp.parse(text)! }

    /// Local wall-clock seconds (counted as if UTC) of `2026-10-23 07:00`.
    static func local(_ text: String) -> Double { utc(text.replacingOccurrences(of: " ", with: "T") + ":00Z") }

    static func clock(_ zone: String, _ weekly: [RegionSchedule.Weekly] = [], except: [String] = []) -> ScheduleClock {
        ScheduleClock(RegionSchedule(timeZone: zone, weekly: weekly, except: except.compactMap(LocalDate.init)))!
    }

    static let weekdays: [Weekday] = [.monday, .tuesday, .wednesday, .thursday, .friday]

    @Test(arguments: [
        // Europe/Dublin: summer time from 2026-03-29 01:00Z, winter time from 2026-10-25 01:00Z.
        ("Europe/Dublin", "2026-03-28 07:00", "2026-03-28T07:00:00Z"),
        ("Europe/Dublin", "2026-03-30 07:00", "2026-03-30T06:00:00Z"),
        ("Europe/Dublin", "2026-03-29 01:30", "2026-03-29T01:00:00Z"),  // skipped: the first instant after
        ("Europe/Dublin", "2026-10-25 01:30", "2026-10-25T00:30:00Z"),  // repeated: the first time round
        ("Europe/Dublin", "2026-10-26 07:00", "2026-10-26T07:00:00Z"),
        // America/New_York: 2026-03-08 02:00 EST → 03:00 EDT; 2026-11-01 02:00 EDT → 01:00 EST.
        ("America/New_York", "2026-03-06 07:00", "2026-03-06T12:00:00Z"),
        ("America/New_York", "2026-03-08 02:30", "2026-03-08T07:00:00Z"),
        ("America/New_York", "2026-03-09 07:00", "2026-03-09T11:00:00Z"),
        ("America/New_York", "2026-11-01 01:30", "2026-11-01T05:30:00Z"),
        ("America/New_York", "2026-11-02 07:00", "2026-11-02T12:00:00Z"),
        // Australia/Sydney: 2026-04-05 03:00 AEDT → 02:00 AEST; 2026-10-04 02:00 AEST → 03:00 AEDT.
        ("Australia/Sydney", "2026-01-15 07:00", "2026-01-14T20:00:00Z"),
        ("Australia/Sydney", "2026-04-05 02:30", "2026-04-04T15:30:00Z"),
        ("Australia/Sydney", "2026-07-15 07:00", "2026-07-14T21:00:00Z"),
        ("Australia/Sydney", "2026-10-04 02:30", "2026-10-03T16:00:00Z"),
    ])
    func localTimesAreExactAcrossTheChanges(zone: String, local: String, expected: String) {
        #expect(Self.clock(zone).instant(local: Self.local(local)) == Self.utc(expected))
    }

    @Test func weekdayMorningsAcrossTheOctoberChangeInDublin() {
        let clock = Self.clock("Europe/Dublin", [RegionSchedule.Weekly(days: Self.weekdays, from: 420, to: 540)])
        let found = clock.boundaries(after: Self.utc("2026-10-23T00:00:00Z"), through: Self.utc("2026-10-28T00:00:00Z"))
        #expect(
            found == [
                ScheduleBoundary(time: Self.utc("2026-10-23T06:00:00Z"), starts: true),
                ScheduleBoundary(time: Self.utc("2026-10-23T08:00:00Z"), starts: false),
                ScheduleBoundary(time: Self.utc("2026-10-26T07:00:00Z"), starts: true),
                ScheduleBoundary(time: Self.utc("2026-10-26T09:00:00Z"), starts: false),
                ScheduleBoundary(time: Self.utc("2026-10-27T07:00:00Z"), starts: true),
                ScheduleBoundary(time: Self.utc("2026-10-27T09:00:00Z"), starts: false),
            ])
        #expect(clock.isActive(at: Self.utc("2026-10-23T06:00:00Z")))
        #expect(!clock.isActive(at: Self.utc("2026-10-23T08:00:00Z")), "a period ends before its end time")
        #expect(!clock.isActive(at: Self.utc("2026-10-24T07:00:00Z")), "Saturday")
    }

    @Test func periodsPastMidnightInRepeatedAndSkippedHoursAndOnExceptedDates() {
        // 22:00 to 06:00 every night but the one starting on Christmas Day.
        let nights = Self.clock(
            "America/New_York", [RegionSchedule.Weekly(days: Weekday.allCases, from: 1320, to: 360)],
            except: ["2026-12-25"])
        // The night of 31 October: 22:00 EDT (02:00Z) to 06:00 EST (11:00Z), nine hours.
        #expect(
            nights.boundaries(after: Self.utc("2026-11-01T00:00:00Z"), through: Self.utc("2026-11-01T12:00:00Z")) == [
                ScheduleBoundary(time: Self.utc("2026-11-01T02:00:00Z"), starts: true),
                ScheduleBoundary(time: Self.utc("2026-11-01T11:00:00Z"), starts: false),
            ])
        #expect(nights.isActive(at: Self.utc("2026-12-25T04:00:00Z")), "the night of the 24th")
        #expect(!nights.isActive(at: Self.utc("2026-12-26T04:00:00Z")), "no night starting on the 25th")
        // A period in the repeated hour counts once: 01:00 to 01:30 on 1 November is the first.
        let repeated = Self.clock("America/New_York", [RegionSchedule.Weekly(days: [.sunday], from: 60, to: 90)])
        #expect(
            repeated.boundaries(after: Self.utc("2026-11-01T00:00:00Z"), through: Self.utc("2026-11-01T12:00:00Z")) == [
                ScheduleBoundary(time: Self.utc("2026-11-01T05:00:00Z"), starts: true),
                ScheduleBoundary(time: Self.utc("2026-11-01T05:30:00Z"), starts: false),
            ])
        // A period in the skipped hour starts at the first instant after it: 02:15 to 03:30 on
        // 8 March runs from 03:00 EDT (07:00Z) to 03:30 EDT.
        let skipped = Self.clock("America/New_York", [RegionSchedule.Weekly(days: [.sunday], from: 135, to: 210)])
        #expect(
            skipped.boundaries(after: Self.utc("2026-03-08T00:00:00Z"), through: Self.utc("2026-03-08T12:00:00Z")) == [
                ScheduleBoundary(time: Self.utc("2026-03-08T07:00:00Z"), starts: true),
                ScheduleBoundary(time: Self.utc("2026-03-08T07:30:00Z"), starts: false),
            ])
        // Every day all day: one period with no boundary within the window.
        let always = Self.clock("Europe/Dublin", [RegionSchedule.Weekly(days: Weekday.allCases, from: 0, to: 1440)])
        #expect(
            always.boundaries(after: Self.utc("2026-03-01T00:00:00Z"), through: Self.utc("2026-04-01T00:00:00Z"))
                .isEmpty)
        #expect(always.isActive(at: Self.utc("2026-03-29T01:30:00Z")))
    }

    // MARK: - The monitor

    func dublinMornings(_ settings: RegionSettings = RegionSettings()) -> Region {
        var settings = settings
        settings.schedule = RegionSchedule(
            timeZone: "Europe/Dublin", weekly: [RegionSchedule.Weekly(days: Self.weekdays, from: 420, to: 540)])
        return grid.circle("school", radius: 100, settings: settings)
    }

    @Test func visitsOpenAtSevenAndCloseAtNineLocalOnWeekdaysOnly() throws {
        // At the centre from Friday 00:00 Irish time (Thursday 23:00Z) to Tuesday 23:53Z, a fix
        // every 7 minutes (so no fix falls on a start or an end).
        let start = Self.utc("2026-10-22T23:00:00Z")
        let fixes = stride(from: start, through: Self.utc("2026-10-27T23:59:00Z"), by: 420).map {
            grid.fix(0, 0, t: $0)
        }
        var harness = try MonitorHarness(regions: [dublinMornings()], settings: MonitorSettings())
        try harness.feed(fixes)
        let expected = [
            ("enter", "2026-10-23T06:00:00Z"), ("exit", "2026-10-23T08:00:00Z"),
            ("enter", "2026-10-26T07:00:00Z"), ("exit", "2026-10-26T09:00:00Z"),
            ("enter", "2026-10-27T07:00:00Z"), ("exit", "2026-10-27T09:00:00Z"),
        ].map { "\($0.0)@\(Self.utc($0.1))[schedule]" }
        #expect(harness.summary == expected)
        // The visits: the exit's flag closes each with schedule_ended.
        let exits = harness.events.filter { $0.kind == .exit }.map { GeofenceEvent($0) }
        #expect(exits.map { VisitExitReason(closing: $0) } == [.scheduleEnded, .scheduleEnded, .scheduleEnded])
        // Cut anywhere and resumed from the saved state: the same events.
        var first = try MonitorHarness(regions: [dublinMornings()], settings: MonitorSettings())
        try first.feed(Array(fixes[..<500]))
        var second = try MonitorHarness(regions: [dublinMornings()], settings: MonitorSettings())
        second.state = first.state
        try second.feed(Array(fixes[500...]))
        #expect(first.summary + second.summary == expected)
    }

    @Test func insideAPeriodVisitsFollowTheOrdinaryRules() throws {
        // Monday 26 October, in the period 07:00Z to 09:00Z: from x = -300 at 07:30:00 east at
        // 1 m/s, a fix a second: in at the edge (x = -100) at 07:33:20, out at x = +100 at 07:36:40.
        let monday = Self.utc("2026-10-26T07:30:00Z")
        let fixes = (0...600).map { grid.fix(-300 + Double($0), 0, t: monday + Double($0)) }
        var harness = try MonitorHarness(regions: [dublinMornings()], settings: MonitorHarness.raw)
        try harness.feed(fixes)
        #expect(harness.summary == ["enter@\(monday + 200)", "exit@\(monday + 400)"])
    }

    @Test func expectInsideSaysAbsentAtAStartOutsideAndAtAnExitDuringAPeriod() throws {
        // The depot at night: 22:00 to 06:00 Dublin time, every night (winter: UTC).
        var settings = RegionSettings(expectsInside: true)
        settings.schedule = RegionSchedule(
            timeZone: "Europe/Dublin", weekly: [RegionSchedule.Weekly(days: Weekday.allCases, from: 1320, to: 360)])
        let depot = grid.circle("depot", radius: 100, settings: settings)
        let evening = Self.utc("2026-11-10T21:50:00Z")
        var fixes: [Fix] = []
        // 500 m out at 21:50 and 22:10 (absent at 22:00), then in at 1 m/s from 22:10: the edge
        // at 22:16:40 (x = 100 after 400 s); at the centre until 03:00, out east at 1 m/s: the
        // edge at 03:01:40; 500 m out from 03:08:20 until 07:00.
        fixes += [grid.fix(500, 0, t: evening), grid.fix(500, 0, t: evening + 1200)]
        fixes += (1...500).map { grid.fix(500 - Double($0), 0, t: evening + 1200 + Double($0)) }
        let three = Self.utc("2026-11-11T03:00:00Z")
        fixes += stride(from: evening + 1800, to: three, by: 300).map { grid.fix(0, 0, t: $0) }
        fixes += (0...500).map { grid.fix(Double($0), 0, t: three + Double($0)) }
        fixes += stride(from: three + 600, through: Self.utc("2026-11-11T07:00:00Z"), by: 600).map {
            grid.fix(500, 0, t: $0)
        }
        var harness = try MonitorHarness(regions: [depot], settings: MonitorHarness.raw)
        try harness.feed(fixes)
        #expect(
            harness.summary == [
                "absent@\(evening + 600)[schedule]", "enter@\(evening + 1200 + 400)", "exit@\(three + 100)",
                "absent@\(three + 100)",
            ])
    }
}
