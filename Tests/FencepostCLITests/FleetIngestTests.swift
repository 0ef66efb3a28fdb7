import FencepostTestSupport
import Foundation
import Testing

/// `ingest` and `scan` of one file holding many devices.
@Suite struct FleetIngestTests {
    /// Three vehicles walking through IngestCommandTests' circle from different starts (x =
    /// -300, -260, -220 m; in at 120, 100 and 80 s, out 60 s later), their rows interleaved in
    /// time (ten of one vehicle's rows out of order), with an AIS-style header: the vessel in
    /// `MMSI`, zone-less times in `BaseDateTime`, each vehicle a quarter second after the last.
    static func fleet() -> (file: String, split: [String: String]) {
        var rows: [(time: Double, vehicle: String, line: String)] = []
        for (index, vehicle) in ["101", "202", "303"].enumerated() {
            let walk = IngestCommandTests.walk(from: 0, to: 300 - 60 * index, start: -300 + 40 * Double(index))
            for (row, line) in walk.split(separator: "\n").dropFirst().enumerated() {
                let fields = line.split(separator: ",")
                // Zone-less: the Z dropped, the vehicles a few seconds apart.
                let time = Double(row) + Double(index) * 0.25
                let stamp = Date(timeIntervalSince1970: 1_700_000_000 + time).formatted(
                    Date.ISO8601FormatStyle(includingFractionalSeconds: true))
                rows.append((time, vehicle, "\(vehicle),\(stamp.dropLast()),\(fields[1]),\(fields[2]),\(fields[3])"))
            }
        }
        rows.sort { $0.time < $1.time }
        // Vehicle 202's rows 100–109 come after its row 110.
        let late = rows.indices.filter { rows[$0].vehicle == "202" }[100..<110].map { rows[$0] }
        rows.removeAll { row in late.contains { $0.line == row.line } }
        let after = rows.firstIndex { $0.vehicle == "202" && $0.time > late.last!.time }!
        rows.insert(contentsOf: late, at: after + 1)
        let header = "MMSI,BaseDateTime,LAT,LON,accuracy"
        let file = ([header] + rows.map(\.line)).joined(separator: "\n") + "\n"
        var split: [String: String] = [:]
        for vehicle in ["101", "202", "303"] {
            split[vehicle] =
                ([header] + rows.filter { $0.vehicle == vehicle }.map(\.line)).joined(separator: "\n") + "\n"
        }
        return (file, split)
    }

    /// The fleet file gives the events of its vehicles ingested one file each; the summary
    /// counts fixes and events per vehicle.
    @Test func aFleetFileGivesTheEventsOfItsDevicesSplit() async throws {
        let (fleet, split) = Self.fleet()
        let together = try FencepostBinary()
        let apart = try FencepostBinary()
        defer {
            together.cleanUp()
            apart.cleanUp()
        }
        for cli in [together, apart] {
            #expect(
                try await cli.run("regions", "apply", cli.write("regions.geojson", IngestCommandTests.region)).status
                    == 0)
        }
        let ingest = try await together.run("ingest", "--json", together.write("fleet.csv", fleet))
        #expect(ingest.status == 0, "\(ingest.stderr)")
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(ingest.stdout.utf8)) as? [String: Any])
        #expect(summary["devices"] as? [String] == ["101", "202", "303"])
        #expect(summary["fixes_read"] as? Int == 300 + 240 + 180)
        let byDevice = try #require(summary["by_device"] as? [String: [String: Any]])
        #expect(byDevice["101"]?["fixes_read"] as? Int == 300 && byDevice["303"]?["fixes_accepted"] as? Int == 180)
        for vehicle in ["101", "202", "303"] {
            #expect(byDevice[vehicle]?["events"] as? [String: Int] == ["enter": 1, "exit": 1], "\(vehicle)")
        }

        for vehicle in ["101", "202", "303"] {
            let result = try await apart.run(
                "ingest", "--device-column", "mmsi", apart.write("\(vehicle).csv", split[vehicle]!))
            #expect(result.status == 0, "\(result.stderr)")
        }
        let exports = try await (together.run("events", "export").stdout, apart.run("events", "export").stdout)
        #expect(exports.0.split(separator: "\n").count == 7)
        #expect(exports.0 == exports.1)

        // For people: one line per device.
        let again = try await together.run("ingest", together.path("fleet.csv"))
        #expect(
            again.stderr.contains("per device:\n  101  fixes 300 read, 0 accepted; events: enter 0, exit 0, dwell 0\n"))
    }

    /// `--tz` (scan: `--input-tz`) says which zone the zone-less times are in: the same file
    /// read as UTC and as New York's (UTC−5 in November) gives events five hours apart.
    @Test func zonelessTimesAreUTCUnlessTZSaysOtherwise() async throws {
        let (fleet, _) = Self.fleet()
        let cli = try FencepostBinary()
        defer { cli.cleanUp() }
        #expect(
            try await cli.run("regions", "apply", cli.write("regions.geojson", IngestCommandTests.region)).status == 0)
        let file = try cli.write("fleet.csv", fleet)
        let utc = try await cli.run("scan", "--regions", cli.path("regions.geojson"), file)
        let newYork = try await cli.run(
            "scan", "--regions", cli.path("regions.geojson"), "--input-tz", "America/New_York", file)
        #expect(utc.status == 0 && newYork.status == 0)
        let iso = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
        func times(_ csv: String) throws -> [Double] {
            try csv.split(separator: "\n").dropFirst().map {
                try iso.parse(String($0.split(separator: ",")[1])).timeIntervalSince1970
            }
        }
        let (early, late) = try (times(utc.stdout), times(newYork.stdout))
        #expect(early.count == 6 && late.count == 6)
        #expect(zip(early, late).allSatisfy { abs($1 - $0 - 5 * 3600) < 0.001 })
        // The first enter: vehicle 303 crosses x = -60 80 s after its first fix.
        #expect(abs(early[0] - (1_700_000_000 + 80.5)) < 0.01)

        let ingest = try await cli.run("ingest", "--json", "--tz", "America/New_York", file)
        #expect(ingest.status == 0)
        let exported = try times(try await cli.run("events", "export").stdout)
        #expect(exported == late.sorted())
        let bad = try await cli.run("ingest", "--tz", "Mars/Olympus_Mons", file)
        #expect(bad.status == 64 && bad.stderr.contains("--tz: unknown time zone Mars/Olympus_Mons"))
    }

    @Test func aMissingNamedColumnRefusesTheFileNamingIt() async throws {
        let cli = try FencepostBinary()
        defer { cli.cleanUp() }
        let file = try cli.write("walk.csv", IngestCommandTests.walk())
        let result = try await cli.run("ingest", "--device-column", "vessel", file)
        #expect(result.status == 1)
        #expect(
            result.stderr.contains(
                #"walk.csv:1: no column "vessel" for the device in the CSV header; found: time, lat, lon, accuracy"#))
    }

    /// With no region monitored, ingest still reads and anchors, and says how to add regions.
    @Test func ingestWithoutRegionsSaysHowToAddThem() async throws {
        let cli = try FencepostBinary()
        defer { cli.cleanUp() }
        let result = try await cli.run("ingest", cli.write("walk.csv", IngestCommandTests.walk()))
        #expect(result.status == 0)
        #expect(
            result.stderr.hasPrefix(
                "note: no region is monitored, so these fixes make no events; add regions with `fencepost regions apply PATH --backfill SINCE`"
            ))
        #expect(result.stderr.contains("fixes: 300 read, 300 accepted"))
    }
}
