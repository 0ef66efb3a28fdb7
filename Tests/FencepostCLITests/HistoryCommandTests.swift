import FencepostTestSupport
import Foundation
import Testing

/// `fencepost track`, `where` and `history` as a user runs them, on the sample trace the
/// README's main command ingests; the GPX checked by gpxpy, a GPX reader that is not ours.
@Suite struct HistoryCommandTests {
    static let sample = TestData.packageRoot.appendingPathComponent("samples/bus304_to_UL_2019-02-18.gpx").path
    static let regions = TestData.packageRoot.appendingPathComponent("regions").path
    static let python = ProcessInfo.processInfo.environment["FENCEPOST_TEST_PYTHON"].flatMap { $0.isEmpty ? nil : $0 }

    /// The sample ingested into `cli`'s store: its device and how many fixes were accepted.
    func ingestSample(_ cli: FencepostBinary) async throws -> (device: String, accepted: Int) {
        #expect(try await cli.run("regions", "apply", Self.regions).status == 0)
        let ingest = try await cli.run("ingest", "--json", Self.sample)
        #expect(ingest.status == 0, "\(ingest.stderr)")
        let summary = try JSONSerialization.jsonObject(with: Data(ingest.stdout.utf8)) as? [String: Any]
        let accepted = try #require(summary?["fixes_accepted"] as? Int)
        let devices = try #require(summary?["devices"] as? [String])
        return (try #require(devices.first), accepted)
    }

    func status(_ cli: FencepostBinary) async throws -> [String: Any] {
        let output = try await cli.run("history", "status", "--format", "json")
        return try JSONSerialization.jsonObject(with: Data(output.stdout.utf8)) as? [String: Any] ?? [:]
    }

    @Test(.enabled(if: python != nil, "needs FENCEPOST_TEST_PYTHON (tools/python, with gpxpy)"))
    func theSampleTrackIsGPXThatGpxpyReads() async throws {
        let cli = try FencepostBinary()
        defer { cli.cleanUp() }
        let (device, accepted) = try await ingestSample(cli)
        #expect(try await status(cli)["fixes"] as? Int == accepted)
        let gpx = cli.path("track.gpx")
        #expect(try await cli.run("track", device, "--format", "gpx", "-o", gpx).status == 0)
        let script = """
            import gpxpy, sys
            with open(sys.argv[1]) as f:
                g = gpxpy.parse(f)
            points = [p for t in g.tracks for s in t.segments for p in s.points]
            times = [p.time for p in points]
            assert all(a < b for a, b in zip(times, times[1:])), "not in time order"
            print(len(g.tracks), g.tracks[0].name, len(points), points[0].latitude, points[-1].longitude)
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try #require(Self.python))
        process.arguments = ["-c", script, gpx]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let fields = output.split(separator: " ")
        #expect(fields.count == 5 && fields[0] == "1" && fields[1] == device && Int(fields[2]) == accepted, "\(output)")

        // The same fixes as CSV and GeoJSON.
        let csv = try await cli.run("track", device, "--format", "csv")
        #expect(csv.stdout.split(separator: "\n").count == accepted + 1)
        let geojson = try await cli.run("track", device)
        let collection = try JSONSerialization.jsonObject(with: Data(geojson.stdout.utf8)) as? [String: Any]
        #expect((collection?["features"] as? [Any])?.count == accepted)
    }

    @Test func whereInterpolatesBetweenTheFixesAroundATime() async throws {
        let cli = try FencepostBinary()
        defer { cli.cleanUp() }
        let (device, _) = try await ingestSample(cli)
        let rows = try await cli.run("track", device, "--format", "csv").stdout.split(separator: "\n").dropFirst()
            .map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        // Two consecutive fixes at least two seconds apart, in different places.
        let index = try #require(
            rows.indices.dropLast().first { i in
                let (a, b) = (formatter.date(from: rows[i][1])!, formatter.date(from: rows[i + 1][1])!)
                return b.timeIntervalSince(a) >= 2 && rows[i][2] != rows[i + 1][2]
            })
        let (a, b) = (rows[index], rows[index + 1])
        let (ta, tb) = (formatter.date(from: a[1])!, formatter.date(from: b[1])!)
        let middle = ta.addingTimeInterval(tb.timeIntervalSince(ta) / 2)
        let at = formatter.string(from: middle)
        let table = try await cli.run("where", device, "--at", at)
        #expect(table.status == 0)
        #expect(table.stdout.contains("interpolated, 50 % of the way"), "\(table.stdout)")
        #expect(table.stdout.contains("before  \(a[1])") && table.stdout.contains("after   \(b[1])"))
        let json = try await cli.run("where", device, "--at", at, "--format", "json")
        let answer = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
        #expect(answer?["status"] as? String == "interpolated")
        let position = try #require(answer?["position"] as? [String: Double])
        #expect(abs(position["lat"]! - (Double(a[2])! + Double(b[2])!) / 2) < 1e-7)
        #expect(abs(position["lon"]! - (Double(a[3])! + Double(b[3])!) / 2) < 1e-7)

        // Outside the stored range, or across a gap wider than --max-gap: no position, exit 1.
        let early = try await cli.run("where", device, "--at", "2000-01-01T00:00:00Z")
        #expect(early.status == 1 && early.stdout.contains("before the first stored fix"))
        let gap = try await cli.run("where", device, "--at", at, "--max-gap", "1")
        #expect(gap.status == 1 && gap.stdout.contains("more than max_gap"))
    }

    @Test func badInputIsRefusedClearly() async throws {
        let cli = try FencepostBinary()
        defer { cli.cleanUp() }
        let (device, _) = try await ingestSample(cli)
        let since = try await cli.run("track", device, "--since", "yesterday")
        #expect(since.status == 64 && since.stderr.contains("--since is not an RFC 3339 time"))
        let format = try await cli.run("track", device, "--format", "kml")
        #expect(format.status == 64 && format.stderr.contains("kml"))
        let unknown = try await cli.run("track", "nobody")
        #expect(unknown.status == 1 && unknown.stderr.contains("no stored fixes for device nobody"))
        #expect(unknown.stderr.contains(device))
        let at = try await cli.run("where", device, "--at", "noon")
        #expect(at.status == 64 && at.stderr.contains("--at is not an RFC 3339 time"))
    }

    @Test func noHistoryKeepsNoFixAndTheSameEvents() async throws {
        let with = try FencepostBinary()
        let without = try FencepostBinary()
        defer {
            with.cleanUp()
            without.cleanUp()
        }
        _ = try await ingestSample(with)
        #expect(try await without.run("regions", "apply", Self.regions).status == 0)
        #expect(try await without.run("ingest", "--no-history", Self.sample).status == 0)
        #expect(try await status(without)["fixes"] as? Int == 0)
        #expect(try await with.run("events", "export").stdout == without.run("events", "export").stdout)
        #expect(
            try await with.run("visits", "list", "--format", "csv").stdout
                == without.run("visits", "list", "--format", "csv").stdout)
        // Retention: the sample is from 2019, older than the default 365 days.
        #expect(
            try await with.run("history", "retention").stdout
                == "history_days 365\nevents_days forever\nvisits_days forever\n")
        let prune = try await with.run("history", "prune")
        #expect(prune.status == 0 && prune.stderr.contains("fixes older than 365 days deleted"))
        #expect(try await status(with)["fixes"] as? Int == 0)
    }

    /// An ingest of many files killed (SIGKILL) mid-way: the fixes kept are exactly those of
    /// the files whose events committed (each file's fixes and events share its transaction);
    /// run again, the store holds what a clean run gives.
    @Test func aKilledIngestKeepsTheFixesOfWhatCommittedOnly() async throws {
        let killed = try FencepostBinary()
        let clean = try FencepostBinary()
        defer {
            killed.cleanUp()
            clean.cleanUp()
        }
        let region =
            #"{"type":"FeatureCollection","features":[{"type":"Feature","id":"c","geometry":{"type":"Point","coordinates":[8.0,47.0]},"properties":{"radius":100}}]}"#
        let files = (0..<20).map { "part\($0).csv" }
        let perDevice = 150
        for cli in [killed, clean] {
            #expect(try await cli.run("regions", "apply", cli.write("regions.geojson", region)).status == 0)
            for (index, file) in files.enumerated() {
                var text = "time,lat,lon,accuracy,device\n"
                for device in 0..<40 {
                    for step in 0..<perDevice {
                        let time = 1_750_000_000 + step * 10
                        text += "\(time),\(46.9963 + Double(step) * 0.00005),8.0,5,f\(index)d\(device)\n"
                    }
                }
                try cli.write(file, text)
            }
        }
        // Half-way through, a named pipe nobody writes to: the ingest commits the files before
        // it and then waits there, still running, however busy the machine (a kill timed by
        // watching the store lost that race to a fast ingest under the whole suite's load).
        let held = killed.path("held.csv")
        #expect(mkfifo(held, 0o600) == 0)
        let process = try killed.start(
            ["ingest"] + files[..<10].map(killed.path) + [held] + files[10...].map(killed.path))
        // Each device's walk enters and leaves the circle once: two events per device.
        let before = 10 * 40 * 2
        var events = 0
        let deadline = ContinuousClock.now + .seconds(120)
        while events < before, process.isRunning, ContinuousClock.now < deadline {
            events = try await Self.eventCount(killed)
        }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        try await FencepostBinary.waitForExit(process)
        #expect(process.terminationReason == .uncaughtSignal, "the ingest was still running")
        let after = try await Self.eventCount(killed)
        let fixes = try await status(killed)["fixes"] as? Int
        #expect(after == before)
        #expect(fixes == after / 2 * perDevice, "\(after) events, \(fixes ?? -1) fixes")

        #expect(try await killed.run(["ingest"] + files.map(killed.path)).status == 0)
        #expect(try await clean.run(["ingest"] + files.map(clean.path)).status == 0)
        #expect(try await status(killed)["fixes"] as? Int == 20 * 40 * perDevice)
        let device = "f7d3"
        #expect(
            try await killed.run("track", device, "--format", "csv").stdout
                == clean.run("track", device, "--format", "csv").stdout)
    }

    static func eventCount(_ cli: FencepostBinary) async throws -> Int {
        try await cli.run("events", "export").stdout.split(separator: "\n").count - 1
    }
}
