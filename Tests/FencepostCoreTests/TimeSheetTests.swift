import FencepostCore
import Foundation
import Testing

/// Time sheets (design, "history"): visits cut at local midnight in a zone, tags counting
/// overlapping time once, trips' distance shared by time.
@Suite struct TimeSheetTests {
    let zurich = TimeZone(identifier: "Europe/Zurich")!

    func time(_ text: String) -> Double { Timestamp.parse(text)! }

    @Test func aVisitOverMidnightCountsToBothDays() {
        var sheet = TimeSheet(period: .day, zone: zurich, window: -.infinity ..< .infinity)
        sheet.addVisit(
            device: "van", subject: "depot", start: time("2026-11-25T22:00:00+01:00"),
            end: time("2026-11-26T02:30:00+01:00"))
        let rows = sheet.finished()
        #expect(rows.map(\.period) == ["2026-11-25", "2026-11-26"])
        let expected: [Double] = [7200, 9000]
        #expect(rows.map(\.inside) == expected)
        #expect(rows.map(\.visits) == [1, 1])
        #expect(rows[0].lastExit == time("2026-11-26T00:00:00+01:00"))
        #expect(rows[1].firstEntry == time("2026-11-26T00:00:00+01:00"))
        #expect(rows[1].lastExit == time("2026-11-26T02:30:00+01:00"))
    }

    /// 29 March 2026 has 23 hours in Zurich: a visit over the whole day counts 23 hours to it.
    @Test func aDayIsAsLongAsTheZoneMakesIt() {
        var sheet = TimeSheet(period: .day, zone: zurich, window: -.infinity ..< .infinity)
        sheet.addVisit(
            device: "van", subject: "home", start: time("2026-03-28T12:00:00+01:00"),
            end: time("2026-03-30T12:00:00+02:00"))
        let rows = sheet.finished()
        #expect(rows.map(\.period) == ["2026-03-28", "2026-03-29", "2026-03-30"])
        let expected: [Double] = [12 * 3600, 23 * 3600, 12 * 3600]
        #expect(rows.map(\.inside) == expected)
    }

    @Test func regionsSharingATagCountOverlappingTimeOnce() {
        var sheet = TimeSheet(period: .day, zone: .gmt, window: -.infinity ..< .infinity)
        sheet.addVisit(
            device: "van", subject: "client", start: time("2026-11-26T10:00:00Z"), end: time("2026-11-26T12:00:00Z"))
        sheet.addVisit(
            device: "van", subject: "client", start: time("2026-11-26T11:00:00Z"), end: time("2026-11-26T13:00:00Z"))
        sheet.addVisit(
            device: "van", subject: "client", start: time("2026-11-26T15:00:00Z"), end: time("2026-11-26T15:30:00Z"))
        let row = try! #require(sheet.finished().first)
        #expect(row.inside == 3.5 * 3600)
        #expect(row.visits == 3)
        #expect(row.firstEntry == time("2026-11-26T10:00:00Z"))
        #expect(row.lastExit == time("2026-11-26T15:30:00Z"))
    }

    @Test func theWindowClipsAndTripsShareTheirDistanceByTime() {
        let window = time("2026-11-26T00:00:00Z")..<time("2026-11-27T00:00:00Z")
        var sheet = TimeSheet(period: .day, zone: .gmt, window: window)
        sheet.addVisit(
            device: "van", subject: "depot", start: time("2026-11-25T20:00:00Z"), end: time("2026-11-26T01:00:00Z"))
        sheet.addVisit(
            device: "van", subject: "depot", start: time("2026-11-24T20:00:00Z"), end: time("2026-11-24T21:00:00Z"))
        sheet.addTrip(
            device: "van", start: time("2026-11-26T23:00:00Z"), end: time("2026-11-27T01:00:00Z"), distance: 100_000)
        let rows = sheet.finished()
        #expect(rows.count == 2)
        let moving = try! #require(rows.first { $0.subject == nil })
        #expect(moving.distance == 50_000)
        #expect(moving.moving == 3600)
        let depot = try! #require(rows.first { $0.subject == "depot" })
        #expect(depot.inside == 3600)
    }

    @Test(arguments: [
        ("2026-11-26T12:00:00Z", SummaryPeriod.week, "2026-W48"), ("2021-01-01T12:00:00Z", .week, "2020-W53"),
        ("2026-11-26T12:00:00Z", .month, "2026-11"), ("2026-11-26T23:30:00Z", .day, "2026-11-27"),
    ])
    func periodLabels(at text: String, period: SummaryPeriod, label: String) {
        let calendar = SummaryPeriod.calendar(in: zurich)
        #expect(period.period(containing: time(text), calendar: calendar).label == label)
    }
}
