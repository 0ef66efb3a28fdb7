import FencepostTestSupport
import Foundation
import Testing

@Suite struct IngestCommandTests {
    /// A circle 60 m around (lat, lon) and a CSV walk through it, 2 m/s, one fix a second.
    static let region =
        #"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Point","coordinates":[-8.62,52.66]},"properties":{"id":"stop","radius":60}}]}"#

    /// Along the circle's parallel at 2 m/s, from x = `start` metres (west is negative).
    static func walk(from: Int = 0, to: Int = 300, start: Double = -300, device: String? = nil) -> String {
        let metresPerDegree = 111_195.08 * cos(52.66 * .pi / 180)
        var lines = [device == nil ? "time,lat,lon,accuracy" : "time,lat,lon,accuracy,device"]
        for second in from..<to {
            let lon = -8.62 + (start + 2 * Double(second - from)) / metresPerDegree
            let time = Date(timeIntervalSince1970: 1_700_000_000 + Double(second)).formatted(.iso8601)
            lines.append("\(time),52.66,\(lon),5" + (device.map { ",\($0)" } ?? ""))
        }
        return lines.joined(separator: "\n") + "\n"
    }

    @Test func ingestTwiceChangesNothingAndExportsAreStable() async throws {
        let cli = try FencepostBinary()
        defer { cli.cleanUp() }
        #expect(try await cli.run("regions", "apply", cli.write("regions.geojson", Self.region)).status == 0)
        let trace = try cli.write("walk.csv", Self.walk())

        let first = try await cli.run("ingest", "--json", trace)
        #expect(first.status == 0)
        #expect(first.stdout.contains(#""events":{"enter":1,"exit":1}"#))
        #expect(first.stdout.contains(#""devices":["walk"]"#))
        let exported = try await cli.run("events", "export")
        let second = try await cli.run("ingest", trace)
        #expect(second.status == 0)
        #expect(second.stderr.contains("dropped: already_seen 300"))
        #expect(try await cli.run("events", "export").stdout == exported.stdout)

        let lines = exported.stdout.split(separator: "\n")
        #expect(lines.first == "id,time,kind,device,region,visit_id,flags")
        #expect(lines.count == 3)
        #expect(lines[1].contains(",2023-11-14T22:15:20.") && lines[1].contains(",enter,walk,stop,"))

        let berlin = try await cli.run("events", "export", "--tz", "Europe/Berlin", "--kind", "exit")
        #expect(berlin.stdout.hasPrefix("id,time,kind,device,region,visit_id,flags,local_time\n"))
        #expect(berlin.stdout.contains("+01:00\n"))
        let jsonl = try await cli.run("events", "export", "--format", "jsonl")
        #expect(jsonl.stdout.split(separator: "\n").count == 2)
        #expect(try await cli.run("visits", "list", "--format", "json").stdout.contains(#""exit_reason":"exit""#))
        #expect(
            try await cli.run("queue", "status", "--format", "json").stdout
                == #"{"dead":0,"delivered":0,"inflight":0,"pending":5}"# + "\n")  // the region and two events and two visit versions
    }

    @Test func geoJSONAndICalendarExports() async throws {
        let cli = try FencepostBinary()
        defer { cli.cleanUp() }
        #expect(try await cli.run("regions", "apply", cli.write("regions.geojson", Self.region)).status == 0)
        #expect(try await cli.run("ingest", cli.write("walk.csv", Self.walk())).status == 0)
        #expect(
            try await cli.run("ingest", cli.write("later.csv", Self.walk(from: 400, to: 440, start: -100))).status == 0)  // back inside, open

        let geojson = try await cli.run("events", "export", "--format", "geojson")
        let collection = try #require(
            try JSONSerialization.jsonObject(with: Data(geojson.stdout.utf8)) as? [String: Any])
        let features = try #require(collection["features"] as? [[String: Any]])
        let types = features.compactMap { ($0["properties"] as? [String: Any])?["type"] as? String }
        #expect(types == ["event", "event", "event", "visit", "visit"])
        // The enter is on the circle's boundary, 60 m west of its centre.
        let enter = try #require((features[0]["geometry"] as? [String: Any])?["coordinates"] as? [Double])
        #expect(abs(enter[1] - 52.66) < 1e-9 && abs((enter[0] + 8.62) * 111_195.08 * cos(52.66 * .pi / 180) + 60) < 0.5)
        let visit = try #require(features[3]["properties"] as? [String: Any])
        #expect(visit["radius"] as? Double == 60 && visit["status"] as? String == "closed")

        let ics = try await cli.run("events", "export", "--format", "ics").stdout
        let lines = ics.components(separatedBy: "\r\n")
        #expect(lines.first == "BEGIN:VCALENDAR" && lines.dropLast().last == "END:VCALENDAR" && lines.last == "")
        #expect(lines.allSatisfy { $0.utf8.count <= 75 })
        #expect(lines.filter { $0 == "BEGIN:VEVENT" }.count == 2 && lines.filter { $0 == "END:VEVENT" }.count == 2)
        #expect(
            lines.filter { $0.hasPrefix("UID:") }.count == 2 && lines.filter { $0.hasPrefix("DTSTART:2023") }.count == 2
        )
        #expect(lines.contains("STATUS:TENTATIVE") && lines.contains("STATUS:CONFIRMED"))
        #expect(!ics.replacingOccurrences(of: "\r\n", with: "").contains("\n"))
    }

    @Test func aMalformedFileIsRefusedAndTheOthersAreIngested() async throws {
        let cli = try FencepostBinary()
        defer { cli.cleanUp() }
        #expect(try await cli.run("regions", "apply", cli.write("regions.geojson", Self.region)).status == 0)
        let good = try cli.write("good.csv", Self.walk(device: "good"))
        let bad = try cli.write(
            "bad.gpx",
            "<gpx><trk><trkseg>\n<trkpt lat=\"52.66\" lon=\"-8.62\"><time>2023-11-14T22:14:20Z</time></trkseg>")
        let result = try await cli.run("ingest", bad, good)
        #expect(result.status == 1)
        #expect(result.stderr.contains("bad.gpx:2: malformed XML"))
        #expect(result.stderr.contains("nothing of it was written"))
        let devices = try await cli.run("visits", "list", "--format", "csv").stdout
        #expect(devices.contains(",good,stop,") && !devices.contains("bad"))
    }

    /// A 100 m circle at home and a 150 m one at the office of the Google Timeline fixtures.
    static let homeAndOffice =
        #"{"type":"FeatureCollection","features":["#
        + #"{"type":"Feature","geometry":{"type":"Point","coordinates":[8.55,47.3667]},"properties":{"id":"home","radius":100}},"#
        + #"{"type":"Feature","geometry":{"type":"Point","coordinates":[8.54,47.378]},"properties":{"id":"office","radius":150}}]}"#

    /// The day of the Google Timeline fixtures, exported by Android and by iOS, gives the same
    /// events: the crossings of a straight walk at a steady pace, computed by hand (haversine
    /// distance along the line between the positions), whichever points sample it.
    @Test(arguments: ["Timeline.json", "location-history.json"])
    func googleTimelineExportsGiveTheDaysEvents(file: String) async throws {
        let cli = try FencepostBinary()
        defer { cli.cleanUp() }
        #expect(try await cli.run("regions", "apply", cli.write("regions.geojson", Self.homeAndOffice)).status == 0)
        let path = TestData.packageRoot.appendingPathComponent("Tests/Fixtures/google-timeline/\(file)").path
        let ingest = try await cli.run("ingest", "--device", "phone", "--json", path)
        #expect(ingest.status == 0, "\(ingest.stderr)")
        #expect(ingest.stdout.contains(#""devices":["phone"]"#))
        let rows = try await cli.run("events", "export").stdout.split(separator: "\n").dropFirst().map {
            $0.split(separator: ",", omittingEmptySubsequences: false)
        }
        #expect(
            rows.map { "\($0[2]) \($0[4])" } == [
                "enter home", "exit home", "enter office", "exit office", "enter home",
            ])
        let expected = [
            "2024-03-05T07:00:00.000Z", "2024-03-05T07:02:02.873Z", "2024-03-05T07:26:55.680Z",
            "2024-03-05T16:03:04.320Z", "2024-03-05T16:27:57.127Z",
        ]
        for (row, time) in zip(rows, expected) {
            let iso = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
            let difference = try iso.parse(String(row[1])).timeIntervalSince(iso.parse(time))
            #expect(abs(difference) < 0.05, "\(row[2]) \(row[4]) at \(row[1]), expected \(time)")
        }
        let forced = try await cli.run("ingest", "--format", "timeline", path)
        #expect(forced.status == 0 && forced.stderr.contains("fixes: "))
    }

    /// A 10 m circle on the path of Tests/Fixtures/fit/garmin-fenix-5-run.fit (its 18th record
    /// is 2 m from the centre) and a 50 m one at the place visit of
    /// Tests/Fixtures/semantic-location-history/2021_AUGUST.json.
    static let fitAndSemanticRegions =
        #"{"type":"FeatureCollection","features":["#
        + #"{"type":"Feature","geometry":{"type":"Point","coordinates":[-122.63435,38.22879]},"properties":{"id":"sonoma","radius":10}},"#
        + #"{"type":"Feature","geometry":{"type":"Point","coordinates":[-79.3832,43.6532]},"properties":{"id":"toronto","radius":50}}]}"#

    /// A FIT file and a Semantic Location History month, detected from their content, ingest
    /// into events; a FIT file cut short is refused with its byte offset, the others still go in.
    @Test func fitAndSemanticLocationHistoryFilesGiveEvents() async throws {
        let cli = try FencepostBinary()
        defer { cli.cleanUp() }
        #expect(
            try await cli.run("regions", "apply", cli.write("regions.geojson", Self.fitAndSemanticRegions)).status == 0)
        let fixtures = TestData.packageRoot.appendingPathComponent("Tests/Fixtures")
        let fit = fixtures.appendingPathComponent("fit/garmin-fenix-5-run.fit")
        let semantic = fixtures.appendingPathComponent("semantic-location-history/2021_AUGUST.json").path
        let bytes = try Data(contentsOf: fit)
        let cut = try cli.write("cut.fit", "")
        try bytes.prefix(4000).write(to: URL(fileURLWithPath: cut))

        let ingest = try await cli.run("ingest", "--json", fit.path, semantic, cut)
        #expect(ingest.status == 1)
        #expect(ingest.stderr.contains("cut.fit: FIT byte "))
        #expect(ingest.stderr.contains("the file ends inside this message"))
        #expect(ingest.stdout.contains(#""skipped":{"untimed_waypoint":2}"#))
        let rows = try await cli.run("events", "export").stdout.split(separator: "\n").dropFirst().map {
            $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        }
        #expect(
            rows.map { "\($0[2]) \($0[3]) \($0[4])" } == [
                "enter garmin-fenix-5-run sonoma", "enter 2021_AUGUST toronto", "exit 2021_AUGUST toronto",
            ])
        // The run reaches the circle between its records at 14:34:45 and 14:34:54; the visit
        // begins at 08:00 and is left between the raw points at 08:30:00.5 and 08:33.
        #expect(rows[0][1] > "2017-06-11T14:34:45" && rows[0][1] < "2017-06-11T14:34:54")
        #expect(rows[1][1] == "2021-08-01T08:00:00.000Z")
        #expect(rows[2][1] > "2021-08-01T08:30:00.5" && rows[2][1] < "2021-08-01T08:33")
        #expect(try await cli.run("ingest", "--format", "fit", fit.path).stderr.contains("already_seen 21"))
    }

    /// An ingest of eight files is killed (SIGKILL) twice, each time once more of its files
    /// are committed and while it still runs, then run again: the store converges to what one
    /// clean run gives. Each kill is checked to have landed mid-ingest: the process died of
    /// the signal, and the store held part of the input, more than after the kill before.
    @Test func killedMidIngestThenRerunConvergesToACleanRun() async throws {
        let clean = try FencepostBinary()
        let killed = try FencepostBinary()
        defer {
            clean.cleanUp()
            killed.cleanUp()
        }
        let files = (0..<20).map { "part\($0).csv" }
        for cli in [clean, killed] {
            #expect(try await cli.run("regions", "apply", cli.write("regions.geojson", Self.region)).status == 0)
            for (index, file) in files.enumerated() {
                let walks = (0..<40).map {
                    Self.walk(device: "f\(index)d\($0)").split(separator: "\n").dropFirst().joined(separator: "\n")
                }
                try cli.write(file, "time,lat,lon,accuracy,device\n" + walks.joined(separator: "\n") + "\n")
            }
        }
        #expect(try await clean.run(["ingest"] + files.map(clean.path)).status == 0)
        let total = try await Self.eventCount(clean)
        #expect(total == 20 * 40 * 2)

        var before = 0
        for _ in 0..<2 {
            let process = try killed.start(["ingest"] + files.map(killed.path))
            var seen = before
            while seen <= before, process.isRunning {
                seen = try await Self.eventCount(killed)
            }
            // Only while it runs: an ended process's id may be another's by now.
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            try await FencepostBinary.waitForExit(process)
            #expect(
                process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGKILL,
                "the ingest was still running")
            let after = try await Self.eventCount(killed)
            #expect(
                after > before && after < total,
                "part of the input committed: \(after) of \(total) events, \(before) before")
            before = after
        }
        #expect(try await killed.run(["ingest"] + files.map(killed.path)).status == 0)
        let export = try await (killed.run("events", "export").stdout, clean.run("events", "export").stdout)
        #expect(export.0 == export.1)
        let visits = try await (
            killed.run("visits", "list", "--format", "csv").stdout,
            clean.run("visits", "list", "--format", "csv").stdout
        )
        #expect(visits.0 == visits.1)
        let queue = try await (
            killed.run("queue", "status", "--format", "json").stdout,
            clean.run("queue", "status", "--format", "json").stdout
        )
        #expect(queue.0 == queue.1)
    }

    /// How many events the store holds, as `events export` lists them.
    static func eventCount(_ cli: FencepostBinary) async throws -> Int {
        try await cli.run("events", "export").stdout.split(separator: "\n").count - 1
    }
}
