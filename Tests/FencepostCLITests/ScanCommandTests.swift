import FencepostTestSupport
import Foundation
import Testing

/// `fencepost scan` against `ingest` into a fresh store and the store's exports: the same
/// events, visits, ids, columns and order, and the same summary, with no store written.
@Suite struct ScanCommandTests {
    /// Two circles on the walk's line, one with a dwell; a polygon off it.
    static let regions = #"""
        {"type":"FeatureCollection","features":[
         {"type":"Feature","geometry":{"type":"Point","coordinates":[-8.62,52.66]},"properties":{"id":"stop","radius":60,"dwell":20}},
         {"type":"Feature","geometry":{"type":"Point","coordinates":[-8.6185,52.66]},"properties":{"id":"next","radius":30}},
         {"type":"Feature","geometry":{"type":"Polygon","coordinates":[[[-8.7,52.7],[-8.69,52.7],[-8.69,52.71],[-8.7,52.7]]]},"properties":{"id":"far"}}]}
        """#

    /// Trace files: one device walking through both circles across two files (a visit open at
    /// the end of the first), a second device's walk with its rows in reverse, and a file
    /// holding two devices.
    static func traces(_ cli: FencepostBinary) throws -> [String] {
        let reversed = IngestCommandTests.walk(from: 0, to: 250, start: -200).split(separator: "\n")
        return [
            try cli.write("a-1.csv", IngestCommandTests.walk(from: 0, to: 160, device: "a")),
            try cli.write("a-2.csv", IngestCommandTests.walk(from: 160, to: 400, start: 20, device: "a")),
            try cli.write(
                "b.csv",
                ([String(reversed[0])] + reversed.dropFirst().reversed().map(String.init)).joined(separator: "\n")
                    + "\n"),
            try cli.write(
                "c-and-d.csv",
                IngestCommandTests.walk(from: 0, to: 300, start: -250, device: "c")
                    + IngestCommandTests.walk(from: 0, to: 300, start: -350, device: "d").split(separator: "\n")
                    .dropFirst().joined(separator: "\n") + "\n"),
        ]
    }

    @Test func scanGivesWhatIngestAndTheExportsGive() async throws {
        let cli = try FencepostBinary()
        defer { cli.cleanUp() }
        let regions = try cli.write("regions.geojson", Self.regions)
        let traces = try Self.traces(cli)
        #expect(try await cli.run("regions", "apply", regions).status == 0)
        let ingest = try await cli.run(["ingest"] + traces)
        #expect(ingest.status == 0)

        let cases: [(scan: [String], export: [String])] = [
            ([], ["events", "export"]),
            (
                ["--format", "jsonl", "--tz", "Europe/Dublin"],
                ["events", "export", "--format", "jsonl", "--tz", "Europe/Dublin"]
            ),
            (["--format", "geojson"], ["events", "export", "--format", "geojson"]),
            (["--visits"], ["visits", "list", "--format", "csv"]),
        ]
        for (scanOptions, export) in cases {
            let scan = try await cli.run(["scan", "--regions", regions] + scanOptions + traces)
            let stored = try await cli.run(export)
            #expect(scan.status == 0)
            #expect(scan.stdout == stored.stdout, "scan \(scanOptions)")
            #expect(scan.stderr == ingest.stderr, "scan \(scanOptions): the same summary")
        }
        let events = try await cli.run("events", "export")
        let kinds = Set(events.stdout.split(separator: "\n").dropFirst().map { $0.split(separator: ",")[2] })
        #expect(kinds == ["enter", "exit", "dwell"])
    }

    @Test func writesToAnExistingPipeOrDeviceAsItIs() async throws {
        let cli = try FencepostBinary()
        defer { cli.cleanUp() }
        let regions = try cli.write("regions.geojson", Self.regions)
        let trace = try cli.write("walk.csv", IngestCommandTests.walk())
        let fifo = cli.path("events.fifo")
        #expect(mkfifo(fifo, 0o600) == 0)
        // A reader on the pipe: the scan writes into it rather than renaming a file over it.
        let received = try await withThrowingTaskGroup(of: String?.self) { group in
            group.addTask {
                try await offThePool {
                    // Opening a pipe for reading waits for its writer; reading ends when it closes.
                    guard let reader = FileHandle(forReadingAtPath: fifo) else { return "" }
                    return String(decoding: reader.readDataToEndOfFile(), as: UTF8.self)
                }
            }
            group.addTask {
                let scan = try await cli.run("scan", "--regions", regions, trace, "-o", fifo)
                #expect(scan.status == 0)
                return nil
            }
            var text = ""
            for try await result in group { if let result { text = result } }
            return text
        }
        let toFile = try await cli.run("scan", "--regions", regions, trace, "-o", cli.path("events.csv"))
        #expect(toFile.status == 0)
        #expect(received == (try String(contentsOfFile: cli.path("events.csv"), encoding: .utf8)))
        #expect(
            received.hasPrefix("id,time,kind,device,region,visit_id,flags\n")
                && received.split(separator: "\n").count == 6)
        var status = stat()
        #expect(stat(fifo, &status) == 0 && status.st_mode & S_IFMT == S_IFIFO)
    }

    @Test func aRefusedConfigWritesNothingAndAMalformedTraceIsLeftOut() async throws {
        let cli = try FencepostBinary()
        defer { cli.cleanUp() }
        let bad = try cli.write(
            "bad.geojson",
            #"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Point","coordinates":[-8.62,52.66]},"properties":{"id":"stop","radius":-5}}]}"#
        )
        let trace = try cli.write("walk.csv", IngestCommandTests.walk())
        let refused = try await cli.run("scan", "--regions", bad, trace, "-o", cli.path("out.csv"))
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("bad.geojson: feature 0 (id \"stop\"): radius must be greater than 0"))
        #expect(!FileManager.default.fileExists(atPath: cli.path("out.csv")))

        let regions = try cli.write("regions.geojson", Self.regions)
        let broken = try cli.write("broken.gpx", "<gpx><trk><trkseg><trkpt lat=\"52.66\"")
        let scan = try await cli.run("scan", "--regions", regions, broken, trace)
        #expect(scan.status == 1)
        #expect(scan.stderr.contains("broken.gpx") && scan.stderr.contains("nothing of it was written"))
        let good = try await cli.run("scan", "--regions", regions, trace)
        #expect(scan.stdout == good.stdout && !good.stdout.isEmpty)
        // No store was made.
        #expect(!FileManager.default.fileExists(atPath: cli.database))
    }

    /// The two Toronto FIT rides against the city's 158 neighbourhoods, scanned with no
    /// hysteresis, delay or pass-through: the MANIFEST of ../shared/data (counted there by
    /// point in polygon, independently of Fencepost) has the Edge 500 ride visit 20
    /// neighbourhoods with 33 changes, and sample-activity 15 with 30.
    @Test(
        .enabled(if: TestData.sharedAvailable, "needs ../shared/data beside the checkout"),
        arguments: [("garmin-edge-500-activity.fit", 20, 33), ("sample-activity.fit", 15, 30)])
    func realFITRidesThroughTorontosNeighbourhoods(file: String, neighbourhoods: Int, changes: Int) async throws {
        let cli = try FencepostBinary()
        defer { cli.cleanUp() }
        let regions = try cli.write("toronto.geojson", "")
        let imported = try await cli.run(
            "regions", "import", TestData.sharedFile("toronto/toronto_neighbourhoods.geojson"), "--id-property",
            "AREA_SHORT_CODE", "-o", regions)
        #expect(imported.status == 0, "\(imported.stderr)")
        let scan = try await cli.run(
            "scan", "--regions", regions, "--hysteresis", "0", "--enter-delay", "0", "--exit-delay", "0",
            "--no-pass-through", TestData.sharedFile("toronto/\(file)"))
        #expect(scan.status == 0, "\(scan.stderr)")
        let enters = scan.stdout.split(separator: "\n").map { $0.split(separator: ",") }.filter { $0[2] == "enter" }
        #expect(enters.count == changes)
        #expect(Set(enters.map { $0[4] }).count == neighbourhoods)
    }
}
