import FencepostCore
import FencepostFormats
import Foundation
import Testing

@Suite struct TraceReaderTests {
    func readAll(_ path: String, format: TraceFormat? = nil, device: String? = nil) throws -> (fixes: [Fix], skipped: [String: Int]) {
        var reader = try TraceOpener.open(path, format: format, device: device)
        var fixes: [Fix] = []
        while let fix = try reader.next() { fixes.append(fix) }
        return (fixes, reader.skipped)
    }

    // MARK: - CSV

    @Test func csvWithHeaderAliasesSemicolonsAndBadRecords() throws {
        let file = try TemporaryFile("""
            user_id;tracked_at;latitude;longitude;elevation;accuracy\r
            1;2012-12-18T21:30:35Z;47.3766094;8.5484732;0;20\r
            1;;47.3;8.5;0;20\r
            1;2012-12-18T21:29:34Z;NaN;8.5475402;0;36\r
            1;2012-12-18T21:28:34.250+01:00;47.3774609;8.5465331;410;38\r

            """, suffix: ".csv")
        defer { file.remove() }
        let (fixes, skipped) = try readAll(file.path)
        #expect(fixes.count == 2)
        #expect(skipped == ["missing_or_bad_time": 1, "missing_or_bad_coordinates": 1])
        #expect(fixes[0] == Fix(device: "1", time: 1_355_866_235, lat: 47.3766094, lon: 8.5484732, accuracy: 20, altitude: 0))
        #expect(fixes[1].time == 1_355_866_114.25 - 3600)
        #expect(fixes[1].altitude == 410)
    }

    @Test func csvEpochTimesHDOPQuotesAndTheDeviceDefault() throws {
        let file = try TemporaryFile("""
            timestamp,lat,lng,hdop,name
            1700000000,52.5,13.4,1.2,"a, b"
            1700000001500,52.5001,13.4001,,x

            """, suffix: ".csv")
        defer { file.remove() }
        let (fixes, _) = try readAll(file.path)
        #expect(fixes.map(\.time) == [1_700_000_000, 1_700_000_001.5])
        #expect(fixes[0].accuracy == 6)
        #expect(fixes[1].accuracy == nil)
        #expect(Set(fixes.map(\.device)) == [URL(fileURLWithPath: file.path).deletingPathExtension().lastPathComponent])
        #expect(try readAll(file.path, device: "phone").fixes.allSatisfy { $0.device == "phone" })
    }

    @Test func csvWithoutTheNeededColumnsIsRefusedWithFileAndLine() throws {
        let file = try TemporaryFile("when,where\n2020-01-01T00:00:00Z,here\n", suffix: ".csv")
        defer { file.remove() }
        #expect {
            try readAll(file.path)
        } throws: { error in
            guard let error = error as? TraceReadError else { return false }
            return error.file == file.path && error.line == 1 && error.reason.contains("CSV header needs time")
        }
    }

    // MARK: - GPX

    @Test func gpxTracksWithExtensionsAndUntimedPoints() throws {
        let file = try TemporaryFile("""
            <?xml version="1.0" encoding="UTF-8"?>
            <!-- a comment -->
            <gpx version="1.1" creator="test" xmlns="http://www.topografix.com/GPX/1/1">
              <metadata><time>2019-11-07T03:43:52Z</time></metadata>
              <trk><name>Run &amp; back</name><trkseg>
                <trkpt lon="-122.396397" lat="37.781672"><ele>4.07</ele><time>2019-06-11T22:00:42Z</time>
                  <extensions><speed>0.18</speed><hAcc>8.06</hAcc></extensions></trkpt>
                <trkpt lat='37.78167' lon='-122.396396'><hdop>2</hdop><time>2019-06-11T22:00:43.5Z</time></trkpt>
                <trkpt lat="37.7" lon="-122.3"/>
              </trkseg></trk>
            </gpx>
            """, suffix: ".gpx")
        defer { file.remove() }
        let (fixes, skipped) = try readAll(file.path)
        #expect(fixes.count == 2)
        #expect(skipped == ["missing_time": 1])
        #expect(fixes[0] == Fix(device: "Run & back", time: 1_560_290_442, lat: 37.781672, lon: -122.396397, accuracy: 8.06, altitude: 4.07, speed: 0.18))
        #expect(fixes[1].accuracy == 10)
        #expect(fixes[1].time == 1_560_290_443.5)
    }

    @Test func brokenXMLNamesTheLine() throws {
        let file = try TemporaryFile("<gpx>\n<trk><trkseg>\n<trkpt lat=\"1\" lon=\"2\"><time>2020-01-01T00:00:00Z</time></trk>\n</gpx>\n", suffix: ".gpx")
        defer { file.remove() }
        #expect {
            try readAll(file.path)
        } throws: { error in
            guard let error = error as? TraceReadError else { return false }
            return error.line == 3 && error.reason.contains("</trk> does not match <trkpt>")
        }
        let truncated = try TemporaryFile("<gpx><trk><trkseg><trkpt lat=\"1\" lon=\"2\"><time>2020-01-01T00:00:00Z</ti", suffix: ".gpx")
        defer { truncated.remove() }
        #expect(throws: TraceReadError.self) { try readAll(truncated.path) }
    }

    @Test func formatIsDetectedFromContentNotName() throws {
        let gpx = try TemporaryFile("<gpx><wpt lat=\"1\" lon=\"2\"><time>2020-01-01T00:00:00Z</time></wpt></gpx>", suffix: ".data")
        let csv = try TemporaryFile("time,lat,lon\n2020-01-01T00:00:00Z,1,2\n", suffix: ".gpx")
        let neither = try TemporaryFile("hello world\n", suffix: ".csv")
        defer { gpx.remove(); csv.remove(); neither.remove() }
        #expect(try readAll(gpx.path).fixes.count == 1)
        #expect(try readAll(csv.path).fixes.count == 1)
        #expect(throws: TraceReadError.self) { try readAll(neither.path) }
        #expect(throws: TraceReadError.self) { try readAll("/no/such/file.gpx") }
    }

    @Test func smallChunksDoNotChangeWhatIsRead() throws {
        // Elements and lines cut across chunk boundaries at every possible offset.
        let text = "<gpx>" + (0..<50).map { "<trkpt lat=\"1.\($0)\" lon=\"2\"><time>2020-01-01T00:00:\(String(format: "%02d", $0))Z</time></trkpt>" }.joined() + "</gpx>"
        let file = try TemporaryFile(text, suffix: ".gpx")
        defer { file.remove() }
        for chunkSize in [1, 2, 3, 7, 64] {
            var reader = GPXTraceReader(source: try ByteSource(path: file.path, chunkSize: chunkSize), fallbackDevice: "d")
            var count = 0
            while try reader.next() != nil { count += 1 }
            #expect(count == 50, "chunk size \(chunkSize)")
        }
    }

    // MARK: - Real traces

    @Test(.enabled(if: TestData.sharedAvailable), arguments: [
        ("limerick/bus304_to_UL_2019-02-18.gpx", 2144, "304.1"),
        ("boston/blue_hills.gpx", 1285, nil),
        ("formats/apple_watch_route.gpx", 44, nil),
        ("zurich/google_trajectory.csv", 416, "1"),
        ("zurich/gpsies_trajectory.csv", 247, "1"),
        ("apple_health/zip_contents/apple_health_export/workout-routes/route_2019-06-11_3.00pm.gpx", 3, "Route 2019-06-11 3:00pm"),
    ] as [(String, Int, String?)])
    func realTraces(path: String, count: Int, device: String?) throws {
        let (fixes, _) = try readAll(TestData.sharedFile(path))
        #expect(fixes.count == count)
        if let device { #expect(fixes.allSatisfy { $0.device == device }) }
        #expect(fixes.allSatisfy { (-90...90).contains($0.lat) && (-180...180).contains($0.lon) && $0.time > 946_684_800 })
    }
}
