import FencepostTestSupport
import Foundation
import Testing

/// Numbers from outside that once trapped or misled, through the command line: each file format
/// skips a fix with a time past any range (the rest ingested), a region with an absurd radius
/// is refused, a misspelt service setting is refused, `serve` on a busy port exits at once, and a
/// device poisoned by a far-future fix is brought back by `devices reset`.
@Suite struct OutsideNumbersCommandTests {
    /// The walk of ``IngestCommandTests`` with one fix at the year 31 billion (`1e18` seconds) in
    /// the middle, written in each format.
    static func walkWithFarFix(format: String) -> String {
        let csv = IngestCommandTests.walk().split(separator: "\n").dropFirst().map { line in
            let fields = line.split(separator: ",")
            return (time: String(fields[0]), lat: String(fields[1]), lon: String(fields[2]))
        }
        let far = 150
        func seconds(_ index: Int) -> String { index == far ? "1000000000000000000" : "\(1_700_000_000 + index)" }
        switch format {
        case "owntracks":
            return csv.indices.map { index in
                #"\#(csv[index].time)\#t*\#t{"_type":"location","tid":"wk","tst":\#(seconds(index)),"lat":\#(csv[index].lat),"lon":\#(csv[index].lon),"acc":5}"#
            }.joined(separator: "\n") + "\n"
        case "geojson":
            let features = csv.indices.map { index in
                #"{"type":"Feature","geometry":{"type":"Point","coordinates":[\#(csv[index].lon),\#(csv[index].lat)]},"properties":{"time":\#(seconds(index))}}"#
            }
            return #"{"type":"FeatureCollection","features":["# + features.joined(separator: ",") + "]}"
        case "gpx":
            let points = csv.indices.map { index in
                let time = index == far ? "99999-01-01T00:00:00Z" : csv[index].time
                return #"<trkpt lat="\#(csv[index].lat)" lon="\#(csv[index].lon)"><time>\#(time)</time></trkpt>"#
            }
            return #"<?xml version="1.0"?><gpx version="1.1" creator="t"><trk><trkseg>"#
                + points.joined() + "</trkseg></trk></gpx>"
        default:
            return "time,lat,lon,accuracy\n"
                + csv.indices.map { index in
                    "\(index == far ? "1000000000000000000" : csv[index].time),\(csv[index].lat),\(csv[index].lon),5"
                }.joined(separator: "\n") + "\n"
        }
    }

    @Test(
        "a fix with a time past any range is skipped and counted; the rest of the file is ingested",
        arguments: [("csv", "csv"), ("gpx", "gpx"), ("geojson", "geojson"), ("owntracks", "rec")])
    func farTimesInFiles(format: String, suffix: String) async throws {
        let cli = try FencepostBinary()
        defer { cli.cleanUp() }
        #expect(
            try await cli.run("regions", "apply", cli.write("regions.geojson", IngestCommandTests.region)).status == 0)
        let trace = try cli.write("walk.\(suffix)", Self.walkWithFarFix(format: format))
        let result = try await cli.run("ingest", "--json", "--device", "walker", trace)
        #expect(result.status == 0, "\(format): \(result.stderr)")
        let summary = try #require(
            try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], "\(format)")
        // Dropped by the filter, or (GPX's five-digit year is no time at all) skipped by the reader.
        let dropped = (summary["dropped"] as? [String: Int])?["time_out_of_range"] ?? 0
        let skipped = (summary["skipped"] as? [String: Int])?.values.reduce(0, +) ?? 0
        #expect(dropped + skipped == 1, "\(format): \(result.stdout)")
        #expect(summary["fixes_accepted"] as? Int == 299, "\(format): \(result.stdout)")
        #expect(summary["events"] as? [String: Int] == ["enter": 1, "exit": 1], "\(format): \(result.stdout)")
    }

    @Test("a radius of 1e308 m is refused by plan with the reason; so are delays past a day")
    func absurdRegionNumbers() async throws {
        let cli = try FencepostBinary()
        defer { cli.cleanUp() }
        let huge = try cli.write(
            "huge.geojson",
            #"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Point","coordinates":[8,47]},"properties":{"id":"big","radius":1e308,"exit_delay":1e9}}]}"#
        )
        let plan = try await cli.run("regions", "plan", huge)
        #expect(plan.status == 1)
        #expect(plan.stderr.contains("radius: must be at most 1000000 m (1,000 km), got 1e+308"), "\(plan.stderr)")
        #expect(plan.stderr.contains("exit_delay: must be at most 86400 s (1 day)"), "\(plan.stderr)")
        let option = try await cli.run("ingest", "--exit-delay", "1e300", huge)
        #expect(option.status == 64)
        #expect(option.stderr.contains("--exit-delay must be at most 86400 s"))
    }

    @Test("a misspelt key in serve's config is refused, naming the file, line, column and the nearest key")
    func misspeltConfigKey() async throws {
        let cli = try FencepostBinary()
        defer { cli.cleanUp() }
        let config = try cli.write("config.json", "{\n  \"metrics_require_tokn\": true\n}\n")
        let result = try await cli.run("serve", "--port", "0", "--config", config)
        #expect(result.status == 1)
        #expect(
            result.stderr.contains(
                #"config.json:2:3: metrics_require_tokn: unknown key; did you mean "metrics_require_token"?"#),
            "\(result.stderr)")
        let typed = try cli.write("typed.json", #"{"jobs": {"outbox_retention_days": "7"}}"#)
        let mismatch = try await cli.run("serve", "--port", "0", "--config", typed)
        #expect(mismatch.status == 1)
        #expect(
            mismatch.stderr.contains(
                "typed.json:1:36: jobs.outbox_retention_days: expected a number, found a JSON string"),
            "\(mismatch.stderr)")
    }

    @Test("serve on a port in use exits 3 at once, naming the address and the reason")
    func busyPort() async throws {
        let cli = try FencepostBinary()
        defer { cli.cleanUp() }
        let (server, port) = try await cli.serve("--port", "0")
        defer { server.terminate() }
        let second = try await cli.run("serve", "--port", "\(port)")
        #expect(second.status == 3)
        #expect(
            second.stderr.contains("cannot listen on 127.0.0.1:\(port): address already in use"), "\(second.stderr)")
        let foreign = try await cli.run("serve", "--host", "192.0.2.1", "--port", "0")
        #expect(foreign.status == 3)
        #expect(foreign.stderr.contains("cannot listen on 192.0.2.1:0: address not available"), "\(foreign.stderr)")
    }

    @Test("devices reset brings back a device whose anchor a far-future fix poisoned, closing its open visit")
    func resetPoisonedDevice() async throws {
        let cli = try FencepostBinary()
        defer { cli.cleanUp() }
        #expect(
            try await cli.run("regions", "apply", cli.write("regions.geojson", IngestCommandTests.region)).status == 0)
        // Into the region, then a fix from 2099 (inside the files' range, far ahead of the rest).
        let into = IngestCommandTests.walk(from: 0, to: 150)
        let poisoned = into + "2099-01-01T00:00:00Z,52.66,-8.62,5\n"
        #expect(try await cli.run("ingest", "--device", "van", cli.write("poison.csv", poisoned)).status == 0)
        let rest = try cli.write("rest.csv", IngestCommandTests.walk(from: 150, to: 300, start: 0))
        let blocked = try await cli.run("ingest", "--device", "van", rest)
        #expect(blocked.stderr.contains("dropped: already_seen 150"), "\(blocked.stderr)")

        let reset = try await cli.run("devices", "reset", "van", "--json")
        #expect(reset.status == 0, "\(reset.stderr)")
        let answer = try #require(try JSONSerialization.jsonObject(with: Data(reset.stdout.utf8)) as? [String: Any])
        #expect(answer["previous_anchor"] as? String == "2099-01-01T00:00:00.000Z")
        #expect(answer["visits_closed"] as? Int == 1)
        let visits = try await cli.run("visits", "list", "--format", "json")
        #expect(visits.stdout.contains(#""exit_reason":"reset""#), "\(visits.stdout)")

        let again = try await cli.run("ingest", "--json", "--device", "van", rest)
        #expect(again.stdout.contains(#""fixes_accepted":150"#), "\(again.stdout)")
        #expect(try await cli.run("devices", "reset", "nobody").status == 1)
    }
}
