import FencepostRender
import FencepostTestSupport
import Foundation
import Testing

@Suite struct TimelineRendererTests {
    static let t0 = 1_700_000_000.0

    static func scene() -> TimelineScene {
        TimelineScene(
            visits: [
                MapVisit(
                    id: "v1", device: "d", regionID: "home", enteredAt: t0, exitedAt: t0 + 3_600, exitReason: "exit"),
                MapVisit(
                    id: "v2", device: "d", regionID: "shop", enteredAt: t0 + 4_000, exitedAt: t0 + 4_030,
                    exitReason: "exit", flags: ["pass"]),
                MapVisit(
                    id: "v3", device: "d", regionID: "work", enteredAt: t0 + 5_000, exitedAt: t0 + 9_000,
                    exitReason: "exit", flags: ["gap"]),
                MapVisit(id: "v4", device: "d", regionID: "home", enteredAt: t0 + 10_000),
            ],
            lastFix: ["d": t0 + 12_000], regionNames: ["home": "Home"],
            health: [
                HealthBar(
                    row: "steps", eventID: "me:steps-2023-11-14", start: t0 - 3_600, end: t0 + 82_800, value: 9_000,
                    label: "9,000"),
                HealthBar(
                    row: "sleep", eventID: "me:sleep-2023-11-14", start: t0 - 30_000, end: t0 - 3_000, label: "7.0 h"),
                HealthBar(
                    row: "workout", eventID: "me:workout-1", start: t0 + 6_000, end: t0 + 7_800, label: "Running"),
            ])
    }

    @Test func barsPerRegionAndHealthRows() throws {
        let text = TimelineRenderer().svg(Self.scene())
        Pictures.save("test-timeline.svg", text)
        let svg = try ParsedSVG(text)
        #expect(
            svg.all("visit").compactMap { $0.attributes["data-visit-id"] } == ["v1", "v4", "v2", "v3"],
            "rows by region, first visit first")
        #expect(svg.all("region-row").compactMap { $0.attributes["data-region"] } == ["home", "shop", "work"])
        #expect(svg.all("row-label").first?.text == "Home")
        #expect(svg.count("visit", "open") == 1)
        #expect(svg.count("visit", "pass") == 1)
        #expect(svg.count("pass-mark") == 1)
        #expect(svg.count("visit", "gap") == 1)
        #expect(
            svg.all("health").compactMap { $0.attributes["data-event-id"] } == [
                "me:steps-2023-11-14", "me:sleep-2023-11-14", "me:workout-1",
            ])
        #expect(svg.all("health-row").compactMap { $0.attributes["data-row"] } == ["steps", "sleep", "workout"])
    }

    @Test func openVisitsRunToTheLastFix() throws {
        var scene = Self.scene()
        scene.health = []
        let svg = try ParsedSVG(TimelineRenderer().svg(scene))
        func right(_ id: String) throws -> Double {
            let bar = try #require(svg.all("visit").first { $0.attributes["data-visit-id"] == id })
            return Double(bar.attributes["x"]!)! + Double(bar.attributes["width"]!)!
        }
        func left(_ id: String) throws -> Double {
            Double(try #require(svg.all("visit").first { $0.attributes["data-visit-id"] == id }).attributes["x"]!)!
        }
        // Pixels per second from a closed visit, then where 12,000 s after t0 falls.
        let perSecond = (try right("v1") - left("v1")) / 3_600
        let expected = try left("v1") + 12_000 * perSecond
        #expect(abs(try right("v4") - expected) < 1)
    }
}
