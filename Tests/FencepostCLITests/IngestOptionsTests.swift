import FencepostTestSupport
import Foundation
import Testing

/// `fencepost ingest`'s overrides and the regions' own settings, each against the events it
/// must give. The region is a 60 m circle; the walks go along its parallel, x metres east of
/// its centre, so a crossing is where x passes ±60 and its time follows by hand.
@Suite struct IngestOptionsTests {
    static let centre = (lat: 52.66, lon: -8.62)
    static let start = 1_700_000_000.0

    /// The circle, with extra GeoJSON properties (such as `"hysteresis":60`).
    static func region(_ properties: String = "") -> String {
        #"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Point","coordinates":[-8.62,52.66]},"properties":{"id":"stop","radius":60\#(properties.isEmpty ? "" : "," + properties)}}]}"#
    }

    /// A CSV walk through the waypoints (seconds, x metres), straight between them, one fix
    /// every `step` seconds.
    static func walk(
        _ waypoints: [(t: Double, x: Double)], step: Double = 1, accuracy: Double = 5, device: String = "walker"
    ) -> String {
        let metresPerDegree = 111_195.08 * cos(centre.lat * .pi / 180)
        var lines = ["time,lat,lon,accuracy,device"]
        for (from, to) in zip(waypoints, waypoints.dropFirst()) {
            for t in stride(from: from.t, to: to.t, by: step) {
                let x = from.x + (to.x - from.x) * (t - from.t) / (to.t - from.t)
                lines.append("\(Self.time(t)),\(centre.lat),\(centre.lon + x / metresPerDegree),\(accuracy),\(device)")
            }
        }
        let last = waypoints.last!
        lines.append(
            "\(Self.time(last.t)),\(centre.lat),\(centre.lon + last.x / metresPerDegree),\(accuracy),\(device)")
        return lines.joined(separator: "\n") + "\n"
    }

    static func time(_ seconds: Double) -> String {
        Date(timeIntervalSince1970: start + seconds).formatted(.iso8601)
    }

    /// In at 4 m/s (crossing x = -60 at 9.5 s) to x = 110, 50 m outside, from 52 s to 82 s (out
    /// at 39.5 s, back in at 94.5 s), then out for good (crossing at 123.5 s) to 202 m until 190 s.
    static let excursion = walk([(0, -98), (25, 2), (52, 110), (82, 110), (109, 2), (159, 202), (190, 202)])
    /// A dip 4 m into the circle, in at 9.67 s and out at 21.33 s (3 m/s), then out for 30 s.
    static let dip = walk([(0, -89), (11, -56), (20, -56), (31, -89), (60, -89)])
    /// Through the circle at 1 m/s with a fix every 100 s: -150, -50, 50, 150 (crossings at 90 s
    /// and 210 s).
    static let sparse = walk([(0, -150), (300, 150)], step: 100)

    /// The events of `trace` ingested with `options` against the region: `kind@seconds[flags]`,
    /// seconds from the walk's start to the hundredth. Returns the ingest's JSON summary too.
    func events(_ trace: String, _ options: [String] = [], region: String = IngestOptionsTests.region()) async throws
        -> (events: [String], summary: String)
    {
        let cli = try FencepostBinary()
        defer { cli.cleanUp() }
        #expect(try await cli.run("regions", "apply", cli.write("regions.geojson", region)).status == 0)
        let ingest = try await cli.run(["ingest", "--json"] + options + [cli.write("walk.csv", trace)])
        #expect(ingest.status == 0, "\(ingest.stderr)")
        let rows = try await cli.run("events", "export").stdout.split(separator: "\n").dropFirst()
        let iso = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
        let events = try rows.map { row in
            let fields = row.split(separator: ",", omittingEmptySubsequences: false)
            let seconds = try iso.parse(String(fields[1])).timeIntervalSince1970 - Self.start
            let flags = fields[6].isEmpty ? "" : "[\(fields[6])]"
            return "\(fields[2])@\(String(format: "%.2f", seconds))\(flags)"
        }
        return (events, ingest.stdout)
    }

    // MARK: - The run's options

    @Test func defaultsGiveTheExcursionItsOwnVisit() async throws {
        // The default band (20 m) is armed 50 m out; the 10 s exit delay holds out there.
        #expect(try await events(Self.excursion).events == ["enter@9.50", "exit@39.50", "enter@94.50", "exit@123.50"])
    }

    @Test func hysteresisWiderThanTheExcursionKeepsOneVisit() async throws {
        #expect(try await events(Self.excursion, ["--hysteresis", "60"]).events == ["enter@9.50", "exit@123.50"])
        #expect(
            try await events(Self.excursion, ["--hysteresis", "40"]).events == [
                "enter@9.50", "exit@39.50", "enter@94.50", "exit@123.50",
            ])
    }

    @Test func exitDelayLongerThanTheExcursionKeepsOneVisit() async throws {
        // 55 s out (39.5 s to 94.5 s): a 60 s delay does not hold; the final exit waits 60 s.
        #expect(try await events(Self.excursion, ["--exit-delay", "60"]).events == ["enter@9.50", "exit@123.50"])
        #expect(
            try await events(Self.excursion, ["--exit-delay", "50"]).events == [
                "enter@9.50", "exit@39.50", "enter@94.50", "exit@123.50",
            ])
    }

    @Test func enterDelayLongerThanAShallowDipMakesNoVisit() async throws {
        // Inside from 9.67 s to 21.33 s, never deeper than the fixes' 5 m accuracy.
        #expect(try await events(Self.dip).events == ["enter@9.67", "exit@21.33"])
        #expect(try await events(Self.dip, ["--enter-delay", "10"]).events == ["enter@9.67", "exit@21.33"])
        #expect(try await events(Self.dip, ["--enter-delay", "15"]).events == [])
    }

    @Test func maxGapTurnsInterpolationIntoTheInsideFixesTimes() async throws {
        #expect(try await events(Self.sparse).events == ["enter@90.00", "exit@210.00"])
        #expect(
            try await events(Self.sparse, ["--max-gap", "50"]).events == ["enter@100.00[gap]", "exit@200.00[gap]"])
    }

    @Test func maxAccuracyDropsPoorFixes() async throws {
        // 80 m accuracy widens the band to 100 m: the walk goes 240 m past the boundary.
        let poor = Self.walk([(0, -150), (90, 300)], accuracy: 80)
        #expect(try await events(poor).events.map { $0.prefix(4) } == ["ente", "exit"])
        let (events, summary) = try await events(poor, ["--max-accuracy", "50"])
        #expect(events == [])
        #expect(summary.contains(#""dropped":{"low_accuracy":91}"#))
    }

    @Test func maxSpeedDecidesWhatIsATeleport() async throws {
        // Outside, then one fix at the centre a second later (298 m/s), then back out.
        let before = Self.walk([(0, -300), (1, -298)])
        let after = Self.walk([(2, 0), (3, -294), (30, -294)]).split(separator: "\n").dropFirst()
        let jump = before + after.joined(separator: "\n") + "\n"
        let (dropped, summary) = try await events(jump)
        #expect(dropped == [] && summary.contains(#""dropped":{"teleport":1}"#))
        // Let through, the jump is one fix inside among fixes a second apart, whose neighbours
        // are both outside on the same side: no visit (it may lie). Where a second is a sparse
        // trace, it is a visit resting on one fix: in at 1 + 238/298 s, out at 2 + 60/294 s.
        #expect(try await events(jump, ["--max-speed", "400"]).events == [])
        let sparse = try await events(jump, ["--max-speed", "400", "--sparse-interval", "1"]).events
        #expect(sparse == ["enter@1.80", "exit@2.20[single_fix]"], "\(sparse)")
    }

    @Test func formatOverridesWhatTheContentSays() async throws {
        let cli = try FencepostBinary()
        defer { cli.cleanUp() }
        let file = try cli.write("walk.gpx", Self.excursion)  // CSV, whatever the name says
        #expect(try await cli.run("ingest", file).status == 0)
        let forced = try await cli.run("ingest", "--format", "gpx", file)
        #expect(forced.status == 1)
        #expect(forced.stderr.contains("walk.gpx") && forced.stderr.contains("nothing of it was written"))
    }

    @Test func deviceNamesEveryFix() async throws {
        let cli = try FencepostBinary()
        defer { cli.cleanUp() }
        #expect(try await cli.run("regions", "apply", cli.write("regions.geojson", Self.region())).status == 0)
        let two =
            Self.walk([(0, -100), (50, 100)], device: "a")
            + Self.walk([(0, -100), (50, 100)], device: "b").split(separator: "\n").dropFirst().joined(separator: "\n")
            + "\n"
        let ingest = try await cli.run("ingest", "--json", "--device", "bus", cli.write("two.csv", two))
        #expect(ingest.stdout.contains(#""devices":["bus"]"#))
        #expect(ingest.stdout.contains(#""duplicate_time":51"#), "the second device's fixes repeat the first's times")
        let devices = try await cli.run("events", "export").stdout.split(separator: "\n").dropFirst().map {
            $0.split(separator: ",")[3]
        }
        #expect(devices == ["bus", "bus"])
    }

    // MARK: - The regions' own settings

    @Test func aRegionsHysteresisAndDelaysOverrideTheRunsAndTheDefaults() async throws {
        #expect(
            try await events(Self.excursion, region: Self.region(#""hysteresis":60"#)).events == [
                "enter@9.50", "exit@123.50",
            ])
        #expect(
            try await events(Self.excursion, ["--hysteresis", "10"], region: Self.region(#""hysteresis":60"#)).events
                == ["enter@9.50", "exit@123.50"])
        #expect(
            try await events(Self.excursion, region: Self.region(#""exit_delay":60"#)).events == [
                "enter@9.50", "exit@123.50",
            ])
        #expect(
            try await events(Self.excursion, ["--exit-delay", "60"], region: Self.region(#""exit_delay":10"#)).events
                == ["enter@9.50", "exit@39.50", "enter@94.50", "exit@123.50"])
        #expect(try await events(Self.dip, region: Self.region(#""enter_delay":15"#)).events == [])
        #expect(
            try await events(Self.dip, ["--enter-delay", "15"], region: Self.region(#""enter_delay":0"#)).events == [
                "enter@9.67", "exit@21.33",
            ])
    }
}
