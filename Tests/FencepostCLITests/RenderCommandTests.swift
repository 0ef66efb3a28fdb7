import FencepostTestSupport
import Foundation
import Testing

/// `fencepost render map|timeline` run as a user would, the pictures read back with an XML
/// parser and checked against what `ingest`, `events export` and `visits list` say.
@Suite struct RenderCommandTests {
    static let regions = TestData.packageRoot.appendingPathComponent("regions").path
    static let trace = TestData.packageRoot.appendingPathComponent("samples/bus304_to_UL_2019-02-18.gpx").path

    /// The sample applied and ingested; returns the store's event ids and visits.
    static func ingested(_ cli: FencepostBinary) async throws -> (events: Set<String>, visits: [[String: Any]]) {
        #expect(try await cli.run("regions", "apply", regions).status == 0)
        #expect(try await cli.run("ingest", trace).status == 0)
        let lines = try await cli.run("events", "export", "--format", "jsonl").stdout.split(separator: "\n")
        let ids = try lines.map {
            try #require((try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])?["id"] as? String)
        }
        let visits =
            try JSONSerialization.jsonObject(
                with: Data(try await cli.run("visits", "list", "--format", "json").stdout.utf8)) as? [[String: Any]]
            ?? []
        return (Set(ids), visits)
    }

    static func svg(inHTML html: String) throws -> ParsedSVG {
        let start = try #require(html.range(of: "<svg"))
        let end = try #require(html.range(of: "</svg>", options: .backwards))
        return try ParsedSVG(String(html[start.lowerBound..<end.upperBound]))
    }

    @Test func traceMapShowsWhatIngestFinds() async throws {
        let cli = try FencepostBinary()
        defer { cli.cleanUp() }
        let stored = try await Self.ingested(cli)
        #expect(stored.events.count == 97)
        // From the files alone: the same filter and monitor, so the same events and ids.
        let result = try await cli.run(
            "render", "map", "--regions", Self.regions, "--trace", Self.trace, "-o", cli.path("trace.svg"))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("36 regions, 1 track, 97 events, 1 open visit"))
        let svg = try ParsedSVG(String(contentsOfFile: cli.path("trace.svg"), encoding: .utf8))
        #expect(svg.count("region") == 36)
        #expect(svg.count("track") == 1)
        #expect(Set(svg.all("event").compactMap { $0.attributes["data-event-id"] }) == stored.events)
        #expect(svg.count("event") == 97)
        let open = stored.visits.filter { $0["status"] as? String == "open" }.compactMap { $0["id"] as? String }
        #expect(svg.all("open-visit").compactMap { $0.attributes["data-visit-id"] } == open)
    }

    @Test func storeMapAsHTML() async throws {
        let cli = try FencepostBinary()
        defer { cli.cleanUp() }
        let stored = try await Self.ingested(cli)
        let result = try await cli.run("render", "map", "-o", cli.path("store.html"))
        #expect(result.status == 0, "\(result.stderr)")
        let html = try String(contentsOfFile: cli.path("store.html"), encoding: .utf8)
        #expect(html.hasPrefix("<!DOCTYPE html>"))
        #expect(!html.contains("http://") || !html.contains("src=\"http"), "nothing loaded from elsewhere")
        #expect(!html.contains("<script src"), "scripts embedded")
        let svg = try Self.svg(inHTML: html)
        #expect(svg.count("region") == 36)
        #expect(svg.count("track") == 1)
        #expect(svg.count("track", "crossings") == 0, "the stored fixes drawn, not the crossings joined")
        #expect(Set(svg.all("event").compactMap { $0.attributes["data-event-id"] }) == stored.events)
        // Labels that did not fit at the drawn scale are there, for zooming in.
        #expect(svg.all("label").count >= 36)
    }

    /// A store that keeps no fixes (`ingest --no-history`) draws each device's crossings joined.
    @Test func storeMapWithoutHistoryJoinsTheCrossings() async throws {
        let cli = try FencepostBinary()
        defer { cli.cleanUp() }
        #expect(try await cli.run("regions", "apply", Self.regions).status == 0)
        #expect(try await cli.run("ingest", "--no-history", Self.trace).status == 0)
        #expect(try await cli.run("render", "map", "-o", cli.path("store.svg")).status == 0)
        let svg = try ParsedSVG(String(contentsOfFile: cli.path("store.svg"), encoding: .utf8))
        #expect(svg.count("track") == 1)
        #expect(svg.count("track", "crossings") == 1)
    }

    @Test func windowAndRegionSelect() async throws {
        let cli = try FencepostBinary()
        defer { cli.cleanUp() }
        _ = try await Self.ingested(cli)
        let since = "2019-02-18T08:00:00Z"
        let until = "2019-02-18T08:30:00Z"
        let exported = try await cli.run("events", "export", "--since", since, "--until", until, "--format", "jsonl")
            .stdout
            .split(separator: "\n").count
        #expect(
            try await cli.run("render", "map", "--since", since, "--until", until, "-o", cli.path("window.svg")).status
                == 0)
        let window = try ParsedSVG(String(contentsOfFile: cli.path("window.svg"), encoding: .utf8))
        #expect(window.count("event") == exported)
        #expect(exported > 10 && exported < 97)

        let region = "limerick-304:8400B6071101"
        #expect(try await cli.run("render", "map", "--region", region, "-o", cli.path("one.svg")).status == 0)
        let one = try ParsedSVG(String(contentsOfFile: cli.path("one.svg"), encoding: .utf8))
        #expect(one.all("region").compactMap { $0.attributes["data-region-id"] } == [region])
        #expect(Set(one.all("event").compactMap { $0.attributes["data-region"] }) == [region])
        let unknown = try await cli.run("render", "map", "--region", "nowhere", "-o", cli.path("none.svg"))
        #expect(unknown.status == 1 && unknown.stderr.contains("no region nowhere"))
    }

    @Test func refusedConfigIsDrawnAndRefused() async throws {
        let cli = try FencepostBinary()
        defer { cli.cleanUp() }
        let config = try cli.write(
            "bad.geojson",
            """
            {"type": "FeatureCollection", "features": [
              {"type": "Feature", "geometry": {"type": "Point", "coordinates": [-8.62, 52.66]}, "properties": {"id": "ok", "radius": 40}},
              {"type": "Feature", "geometry": {"type": "Polygon", "coordinates": [[[-8.63, 52.66], [-8.62, 52.67], [-8.62, 52.66], [-8.63, 52.67], [-8.63, 52.66]]]}, "properties": {"id": "bowtie"}}
            ]}
            """)
        let result = try await cli.run("render", "map", "--regions", config, "-o", cli.path("bad.svg"))
        #expect(result.status == 1)
        #expect(result.stderr.contains("Self-intersection"))
        #expect(result.stderr.contains("drawn on"))
        let svg = try ParsedSVG(String(contentsOfFile: cli.path("bad.svg"), encoding: .utf8))
        #expect(svg.count("region") == 1)
        #expect(svg.count("refused-shape") == 1)
        #expect(svg.count("problem-mark") == 1)
        #expect(svg.all("problem").contains { $0.text.contains("bowtie") })
    }

    @Test func timelineShowsEveryVisit() async throws {
        let cli = try FencepostBinary()
        defer { cli.cleanUp() }
        let stored = try await Self.ingested(cli)
        let result = try await cli.run("render", "timeline", "-o", cli.path("timeline.svg"))
        #expect(result.status == 0, "\(result.stderr)")
        let svg = try ParsedSVG(String(contentsOfFile: cli.path("timeline.svg"), encoding: .utf8))
        #expect(
            Set(svg.all("visit").compactMap { $0.attributes["data-visit-id"] })
                == Set(stored.visits.compactMap { $0["id"] as? String }))
        #expect(svg.count("visit", "open") == 1)
        #expect(svg.count("region-row") == 36)
        #expect(svg.count("health-row") == 0)
    }

    @Test func timelineHasHealthRows() async throws {
        let cli = try FencepostBinary()
        defer { cli.cleanUp() }
        let export = try cli.write(
            "export.xml",
            """
            <?xml version="1.0"?>
            <HealthData locale="en_US">
            <Record type="HKQuantityTypeIdentifierStepCount" sourceName="iPhone" unit="count" creationDate="2019-02-18 09:01:00 +0000" startDate="2019-02-18 08:00:00 +0000" endDate="2019-02-18 09:00:00 +0000" value="4200"/>
            <Record type="HKQuantityTypeIdentifierStepCount" sourceName="iPhone" unit="count" creationDate="2019-02-17 19:01:00 +0000" startDate="2019-02-17 18:00:00 +0000" endDate="2019-02-17 19:00:00 +0000" value="2100"/>
            <Record type="HKCategoryTypeIdentifierSleepAnalysis" sourceName="iPhone" creationDate="2019-02-18 07:01:00 +0000" startDate="2019-02-17 23:10:00 +0000" endDate="2019-02-18 06:40:00 +0000" value="HKCategoryValueSleepAnalysisAsleepCore"/>
            <Workout workoutActivityType="HKWorkoutActivityTypeRunning" duration="30" durationUnit="min" sourceName="Watch" creationDate="2019-02-18 10:31:00 +0000" startDate="2019-02-18 10:00:00 +0000" endDate="2019-02-18 10:30:00 +0000"/>
            </HealthData>
            """)
        #expect(try await cli.run("health", "import", export).status == 0)
        let ids = try await cli.run("events", "export", "--format", "jsonl").stdout.split(separator: "\n").compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])?["id"] as? String
        }
        #expect(ids.count == 4)
        #expect(try await cli.run("render", "timeline", "-o", cli.path("health.svg")).status == 0)
        let svg = try ParsedSVG(String(contentsOfFile: cli.path("health.svg"), encoding: .utf8))
        #expect(svg.all("health-row").compactMap { $0.attributes["data-row"] } == ["steps", "sleep", "workout"])
        #expect(Set(svg.all("health").compactMap { $0.attributes["data-event-id"] }) == Set(ids))
        #expect(svg.all("bar-text").map(\.text).contains("4,200"))
    }

    @Test func usageAndMissingStore() async throws {
        let cli = try FencepostBinary()
        defer { cli.cleanUp() }
        #expect(try await cli.run("render", "map", "--regions", Self.regions, "-o", cli.path("map.png")).status == 64)
        #expect(try await cli.run("render", "timeline", "-o", cli.path("t.html")).status == 64)
        let missing = try await cli.run("render", "map", "-o", cli.path("map.svg"))
        #expect(missing.status == 3 && missing.stderr.contains("no store"))
        #expect(!FileManager.default.fileExists(atPath: cli.database), "a picture never creates a store")
        // Regions from files need no store.
        #expect(try await cli.run("render", "map", "--regions", Self.regions, "-o", cli.path("map.svg")).status == 0)
    }
}
