import Foundation
import Testing

@Suite struct IngestCommandTests {
    /// A circle 60 m around (lat, lon) and a CSV walk through it, 2 m/s, one fix a second.
    static let region = #"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Point","coordinates":[-8.62,52.66]},"properties":{"id":"stop","radius":60}}]}"#

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

    @Test func ingestTwiceChangesNothingAndExportsAreStable() throws {
        let cli = try FencepostBinary()
        defer { cli.cleanUp() }
        #expect(try cli.run("regions", "apply", cli.write("regions.geojson", Self.region)).status == 0)
        let trace = try cli.write("walk.csv", Self.walk())

        let first = try cli.run("ingest", "--json", trace)
        #expect(first.status == 0)
        #expect(first.stdout.contains(#""events":{"enter":1,"exit":1}"#))
        #expect(first.stdout.contains(#""devices":["walk"]"#))
        let exported = try cli.run("events", "export")
        let second = try cli.run("ingest", trace)
        #expect(second.status == 0)
        #expect(second.stderr.contains("dropped: already_seen 300"))
        #expect(try cli.run("events", "export").stdout == exported.stdout)

        let lines = exported.stdout.split(separator: "\n")
        #expect(lines.first == "id,time,kind,device,region,visit_id,flags")
        #expect(lines.count == 3)
        #expect(lines[1].contains(",2023-11-14T22:15:20.") && lines[1].contains(",enter,walk,stop,"))

        let berlin = try cli.run("events", "export", "--tz", "Europe/Berlin", "--kind", "exit")
        #expect(berlin.stdout.hasPrefix("id,time,kind,device,region,visit_id,flags,local_time\n"))
        #expect(berlin.stdout.contains("+01:00\n"))
        let jsonl = try cli.run("events", "export", "--format", "jsonl")
        #expect(jsonl.stdout.split(separator: "\n").count == 2)
        #expect(try cli.run("visits", "list", "--format", "json").stdout.contains(#""exit_reason":"exit""#))
        #expect(try cli.run("queue", "status", "--format", "json").stdout == #"{"dead":0,"delivered":0,"inflight":0,"pending":5}"# + "\n")  // the region and two events and two visit versions
    }

    @Test func geoJSONAndICalendarExports() throws {
        let cli = try FencepostBinary()
        defer { cli.cleanUp() }
        #expect(try cli.run("regions", "apply", cli.write("regions.geojson", Self.region)).status == 0)
        #expect(try cli.run("ingest", cli.write("walk.csv", Self.walk())).status == 0)
        #expect(try cli.run("ingest", cli.write("later.csv", Self.walk(from: 400, to: 440, start: -100))).status == 0)  // back inside, open

        let geojson = try cli.run("events", "export", "--format", "geojson")
        let collection = try #require(try JSONSerialization.jsonObject(with: Data(geojson.stdout.utf8)) as? [String: Any])
        let features = try #require(collection["features"] as? [[String: Any]])
        let types = features.compactMap { ($0["properties"] as? [String: Any])?["type"] as? String }
        #expect(types == ["event", "event", "event", "visit", "visit"])
        // The enter is on the circle's boundary, 60 m west of its centre.
        let enter = try #require((features[0]["geometry"] as? [String: Any])?["coordinates"] as? [Double])
        #expect(abs(enter[1] - 52.66) < 1e-9 && abs((enter[0] + 8.62) * 111_195.08 * cos(52.66 * .pi / 180) + 60) < 0.5)
        let visit = try #require(features[3]["properties"] as? [String: Any])
        #expect(visit["radius"] as? Double == 60 && visit["status"] as? String == "closed")

        let ics = try cli.run("events", "export", "--format", "ics").stdout
        let lines = ics.components(separatedBy: "\r\n")
        #expect(lines.first == "BEGIN:VCALENDAR" && lines.dropLast().last == "END:VCALENDAR" && lines.last == "")
        #expect(lines.allSatisfy { $0.utf8.count <= 75 })
        #expect(lines.filter { $0 == "BEGIN:VEVENT" }.count == 2 && lines.filter { $0 == "END:VEVENT" }.count == 2)
        #expect(lines.filter { $0.hasPrefix("UID:") }.count == 2 && lines.filter { $0.hasPrefix("DTSTART:2023") }.count == 2)
        #expect(lines.contains("STATUS:TENTATIVE") && lines.contains("STATUS:CONFIRMED"))
        #expect(!ics.replacingOccurrences(of: "\r\n", with: "").contains("\n"))
    }

    @Test func aMalformedFileIsRefusedAndTheOthersAreIngested() throws {
        let cli = try FencepostBinary()
        defer { cli.cleanUp() }
        #expect(try cli.run("regions", "apply", cli.write("regions.geojson", Self.region)).status == 0)
        let good = try cli.write("good.csv", Self.walk(device: "good"))
        let bad = try cli.write("bad.gpx", "<gpx><trk><trkseg>\n<trkpt lat=\"52.66\" lon=\"-8.62\"><time>2023-11-14T22:14:20Z</time></trkseg>")
        let result = try cli.run("ingest", bad, good)
        #expect(result.status == 1)
        #expect(result.stderr.contains("bad.gpx:2: malformed XML"))
        #expect(result.stderr.contains("nothing of it was written"))
        let devices = try cli.run("visits", "list", "--format", "csv").stdout
        #expect(devices.contains(",good,stop,") && !devices.contains("bad"))
    }

    @Test func killedMidIngestThenRerunConvergesToACleanRun() throws {
        let clean = try FencepostBinary(), killed = try FencepostBinary()
        defer { clean.cleanUp(); killed.cleanUp() }
        // Several devices in one large file, plus a second file.
        var big = "time,lat,lon,accuracy,device\n"
        for device in 0..<100 {
            big += Self.walk(device: "d\(device)").split(separator: "\n").dropFirst().joined(separator: "\n") + "\n"
        }
        for cli in [clean, killed] {
            #expect(try cli.run("regions", "apply", cli.write("regions.geojson", Self.region)).status == 0)
            try cli.write("big.csv", big)
            try cli.write("small.csv", Self.walk(device: "small"))
        }
        #expect(try clean.run("ingest", clean.path("big.csv"), clean.path("small.csv")).status == 0)

        for delay in [0.05, 0.2, 0.5] {
            let process = try killed.start("ingest", killed.path("big.csv"), killed.path("small.csv"))
            Thread.sleep(forTimeInterval: delay)
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        #expect(try killed.run("ingest", killed.path("big.csv"), killed.path("small.csv")).status == 0)
        #expect(try killed.run("events", "export").stdout == clean.run("events", "export").stdout)
        #expect(try killed.run("visits", "list", "--format", "csv").stdout == clean.run("visits", "list", "--format", "csv").stdout)
        #expect(try killed.run("queue", "status", "--format", "json").stdout == clean.run("queue", "status", "--format", "json").stdout)
    }
}
