import FencepostCore
import FencepostRender
import FencepostTestSupport
import Foundation
import Testing

/// A timeline over years: ticks on calendar boundaries, visits summed per week or month rather
/// than drawn as slivers, a row per region and device when there are several, the last tick's
/// label inside the picture.
@Suite struct LongTimelineTests {
    /// Eight years from 2012-12-21 (the odd date ticks once fell on): an hour at home each day
    /// for two devices.
    static func eightYears() -> TimelineScene {
        let start = Timestamp.parse("2012-12-21T08:00:00Z")!
        var visits: [MapVisit] = []
        for day in stride(from: 0, to: 8 * 365, by: 3) {
            for device in ["van", "car"] {
                let entered = start + Double(day) * 86_400
                visits.append(
                    MapVisit(
                        id: "\(device)-\(day)", device: device, regionID: "home", enteredAt: entered,
                        exitedAt: entered + 3_600, exitReason: "exit"))
            }
        }
        return TimelineScene(visits: visits, regionNames: ["home": "Home"])
    }

    @Test("eight years: yearly ticks on the first of January, monthly buckets, rows per device")
    func eightYearsAggregated() throws {
        let text = TimelineRenderer(width: 1200).svg(Self.eightYears())
        Pictures.save("test-timeline-eight-years.svg", text)
        let svg = try ParsedSVG(text)
        let labels = svg.elements.filter { $0.name == "text" && $0.attributes["text-anchor"] != nil }.map(\.text)
        #expect(labels.contains("2014") && labels.contains("2018"), "\(labels)")
        #expect(labels.allSatisfy { $0.count == 4 && Int($0) != nil }, "years only: \(labels)")
        #expect(!labels.contains { $0.contains("21") }, "no tick on 21 December: \(labels)")
        let buckets = svg.all("visit-bucket")
        #expect(!buckets.isEmpty)
        #expect(svg.all("visit").isEmpty, "no slivers")
        let total = buckets.compactMap { $0.attributes["data-visits"].flatMap(Int.init) }.reduce(0, +)
        #expect(total == Self.eightYears().visits.count)
        let rows = svg.all("region-row").compactMap { $0.attributes["data-device"] }
        #expect(Set(rows) == ["van", "car"])
        #expect(svg.all("row-label").map(\.text).contains("Home · van"))
    }

    @Test("a day: clock ticks; the tick at the right edge is anchored inside the picture")
    func dayTicks() throws {
        let t0 = Timestamp.parse("2025-06-01T06:00:00Z")!
        // The window ends on a tick (18:00), which falls on the plot's right edge.
        let scene = TimelineScene(
            visits: [MapVisit(id: "v", device: "d", regionID: "r", enteredAt: t0, exitedAt: t0 + 3_600)],
            since: t0 - 3_600, until: t0 + 12 * 3_600)
        let svg = try ParsedSVG(TimelineRenderer(width: 900).svg(scene))
        let ticks = svg.elements.filter { $0.name == "text" && $0.attributes["text-anchor"] != nil }
        #expect(ticks.map(\.text).contains("06:00"))
        let edge = try #require(ticks.first { $0.text == "18:00" }, "\(ticks.map(\.text))")
        #expect(edge.attributes["text-anchor"] == "end")
        #expect(ticks.filter { $0.text != "18:00" }.allSatisfy { $0.attributes["text-anchor"] == "middle" })
        #expect(svg.all("visit").count == 1)
    }
}
