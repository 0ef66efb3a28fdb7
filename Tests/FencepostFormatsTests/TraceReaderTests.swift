import FencepostCore
import FencepostFormats
import FencepostTestSupport
import Foundation
import Testing

@Suite struct TraceReaderTests {
    func readAll(_ path: String, format: TraceFormat? = nil, device: String? = nil) throws -> (
        fixes: [Fix], skipped: [String: Int]
    ) {
        var reader = try TraceOpener.open(path, format: format, device: device)
        var fixes: [Fix] = []
        while let fix = try reader.next() { fixes.append(fix) }
        return (fixes, reader.skipped)
    }

    // MARK: - CSV

    @Test func csvWithHeaderAliasesSemicolonsAndBadRecords() throws {
        let file = try TemporaryFile(
            """
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
        #expect(
            fixes[0]
                == Fix(device: "1", time: 1_355_866_235, lat: 47.3766094, lon: 8.5484732, accuracy: 20, altitude: 0))
        #expect(fixes[1].time == 1_355_866_114.25 - 3600)
        #expect(fixes[1].altitude == 410)
    }

    @Test func csvEpochTimesHDOPQuotesAndTheDeviceDefault() throws {
        let file = try TemporaryFile(
            """
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

    /// Quoted fields before, among and after the ones read give the fixes plain ones give.
    @Test func csvQuotedFieldsAnywhereReadAsPlainOnes() throws {
        let plain = try TemporaryFile(
            "device,time,lat,lon,note\na b,2020-01-01T00:00:00Z,52.5,13.4,x\nc,2020-01-01T00:00:01Z,52.6,13.5,y\n",
            suffix: ".csv")
        let quoted = try TemporaryFile(
            #"""
            device,time,lat,lon,note
            "a b", 2020-01-01T00:00:00Z ,"52.5",13.4,x
            c,2020-01-01T00:00:01Z,52.6,13.5,"y, ""z"""

            """#, suffix: ".csv")
        defer {
            plain.remove()
            quoted.remove()
        }
        let fixes = try readAll(plain.path).fixes
        #expect(fixes.map(\.device) == ["a b", "c"])
        #expect(try readAll(quoted.path).fixes == fixes)
    }

    /// Random records, with their columns in any order, fields of every length (lines shorter
    /// than eight bytes among them) and text beside them, read as written: plain, with every
    /// field quoted, with only the last field read quoted (its quotes may share eight bytes
    /// with the separator after it), and with a quoted column after the ones read.
    @Test func csvRandomRecordsReadAsWrittenPlainOrQuoted() throws {
        var state: UInt64 = 5
        func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int(state >> 33) % bound
        }
        func text(_ letters: String, _ length: Int) -> String {
            String((0..<length).map { _ in letters[letters.index(letters.startIndex, offsetBy: next(letters.count))] })
        }
        for separator in [",", ";", "\t"] {
            let names = ["time", "lat", "lon", "accuracy", "device", "note"]
            let order = names.indices.sorted { _, _ in next(2) == 0 }
            var expected: [Fix] = []
            var rows: [[String]] = []
            for _ in 0..<3000 {
                let time = next(3) == 0 ? String(next(10)) : String(1_700_000_000 + next(1_000_000))
                let lat =
                    (next(2) == 0 ? "-" : "") + String(next(90))
                    + (next(3) == 0 ? "" : "." + text("0123456789", 1 + next(12)))
                let lon = String(next(180)) + (next(3) == 0 ? "" : "." + text("0123456789", 1 + next(12)))
                let accuracy = next(4) == 0 ? "" : String(next(50))
                let device = text("abcxyz", 1 + next(3))
                let note = text("ab 7.-:_", next(25))
                expected.append(
                    Fix(
                        device: device, time: Double(time)!, lat: Double(lat)!, lon: Double(lon)!,
                        accuracy: accuracy.isEmpty ? nil : Double(accuracy)!))
                let values = [time, lat, lon, accuracy, device, note]
                rows.append(order.map { values[$0] })
            }
            let header = order.map { names[$0] }.joined(separator: separator)
            let plain = rows.map { $0.joined(separator: separator) }
            let quoted = rows.map { $0.map { "\"" + $0 + "\"" }.joined(separator: separator) }
            let lastRead = order.lastIndex { names[$0] != "note" }!
            let lastQuoted = rows.map { row in
                row.indices.map { $0 == lastRead ? "\"" + row[$0] + "\"" : row[$0] }.joined(separator: separator)
            }
            let trailing = rows.map { $0.joined(separator: separator) + separator + "\"x\(separator)\"\"y\"" }
            for lines in [plain, quoted, lastQuoted, trailing] {
                let file = try TemporaryFile(([header] + lines).joined(separator: "\n") + "\n", suffix: ".csv")
                defer { file.remove() }
                let (fixes, skipped) = try readAll(file.path)
                #expect(skipped.isEmpty)
                #expect(fixes.count == expected.count)
                let wrong = expected.indices.first { $0 >= fixes.count || fixes[$0] != expected[$0] }
                #expect(
                    wrong == nil,
                    "read \(wrong.map { fixes.indices.contains($0) ? "\(fixes[$0])" : "nothing" } ?? "") from \(wrong.map { lines[$0] } ?? "")"
                )
            }
        }
    }

    @Test func aGivenDeviceNamesEveryFixOverTheCSVsDeviceColumn() throws {
        let file = try TemporaryFile(
            "time,lat,lon,device\n2020-01-01T00:00:00Z,1,2,a\n2020-01-01T00:00:01Z,1,2,b\n", suffix: ".csv")
        defer { file.remove() }
        #expect(try readAll(file.path).fixes.map(\.device) == ["a", "b"])
        #expect(try readAll(file.path, device: "bus").fixes.map(\.device) == ["bus", "bus"])
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
        let file = try TemporaryFile(
            """
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
        #expect(
            fixes[0]
                == Fix(
                    device: "Run & back", time: 1_560_290_442, lat: 37.781672, lon: -122.396397, accuracy: 8.06,
                    altitude: 4.07, speed: 0.18))
        #expect(fixes[1].accuracy == 10)
        #expect(fixes[1].time == 1_560_290_443.5)
    }

    @Test func brokenXMLNamesTheLine() throws {
        let file = try TemporaryFile(
            "<gpx>\n<trk><trkseg>\n<trkpt lat=\"1\" lon=\"2\"><time>2020-01-01T00:00:00Z</time></trk>\n</gpx>\n",
            suffix: ".gpx")
        defer { file.remove() }
        #expect {
            try readAll(file.path)
        } throws: { error in
            guard let error = error as? TraceReadError else { return false }
            return error.line == 3 && error.reason.contains("</trk> does not match <trkpt>")
        }
        let truncated = try TemporaryFile(
            "<gpx><trk><trkseg><trkpt lat=\"1\" lon=\"2\"><time>2020-01-01T00:00:00Z</ti", suffix: ".gpx")
        defer { truncated.remove() }
        #expect(throws: TraceReadError.self) { try readAll(truncated.path) }
    }

    @Test func formatIsDetectedFromContentNotName() throws {
        let gpx = try TemporaryFile(
            "<gpx><wpt lat=\"1\" lon=\"2\"><time>2020-01-01T00:00:00Z</time></wpt></gpx>", suffix: ".data")
        let csv = try TemporaryFile("time,lat,lon\n2020-01-01T00:00:00Z,1,2\n", suffix: ".gpx")
        let neither = try TemporaryFile("hello world\n", suffix: ".csv")
        defer {
            gpx.remove()
            csv.remove()
            neither.remove()
        }
        #expect(try readAll(gpx.path).fixes.count == 1)
        #expect(try readAll(csv.path).fixes.count == 1)
        #expect(throws: TraceReadError.self) { try readAll(neither.path) }
        #expect(throws: TraceReadError.self) { try readAll("/no/such/file.gpx") }
    }

    @Test func smallChunksDoNotChangeWhatIsRead() throws {
        // Elements, a DOCTYPE with an internal subset, a comment and CDATA cut across chunk
        // boundaries at every possible offset.
        let text =
            "<?xml version=\"1.0\"?>\n<!DOCTYPE gpx [\n<!ELEMENT gpx (wpt*)>\n<!ATTLIST wpt lat CDATA #REQUIRED>\n]>\n<!-- c -->"
            + "<gpx>"
            + (0..<50).map {
                "<trkpt lat=\"1.\($0)\" lon=\"2\"><time>2020-01-01T00:00:\(String(format: "%02d", $0))Z</time></trkpt>"
            }.joined() + "</gpx>"
        let file = try TemporaryFile(text, suffix: ".gpx")
        defer { file.remove() }
        for chunkSize in [1, 2, 3, 7, 64] {
            var reader = GPXTraceReader(
                source: try ByteSource(path: file.path, chunkSize: chunkSize), fallbackDevice: "d")
            var count = 0
            while try reader.next() != nil { count += 1 }
            #expect(count == 50, "chunk size \(chunkSize)")
        }
        let json = try TemporaryFile(
            #"{"type": "FeatureCollection", "note": "[\"features\"]", "features": ["#
                + (0..<20).map {
                    #"{"type": "Feature", "geometry": {"type": "Point", "coordinates": [1, 2]}, "properties": {"time": "2020-01-01T00:00:\#(String(format: "%02d", $0))Z", "s": "}]\\\""}}"#
                }.joined(separator: ",\n") + "]}", suffix: ".geojson")
        defer { json.remove() }
        for chunkSize in [1, 2, 5, 64] {
            var reader = GeoJSONTraceReader(
                source: try ByteSource(path: json.path, chunkSize: chunkSize), fallbackDevice: "d", device: nil)
            var count = 0
            while try reader.next() != nil { count += 1 }
            #expect(count == 20, "chunk size \(chunkSize)")
        }
    }

    // MARK: - JSON formats

    @Test func geoJSONPointsAndTimedLines() throws {
        let file = try TemporaryFile(
            #"""
            {"type": "FeatureCollection", "features": [
              {"type": "Feature", "geometry": {"type": "Point", "coordinates": [13.4, 52.5]}, "properties": {"time": "2020-01-01T00:00:00Z", "accuracy": 8}},
              {"type": "Feature", "geometry": {"type": "Point", "coordinates": [13.4, 52.5]}, "properties": {}},
              {"type": "Feature", "geometry": {"type": "LineString", "coordinates": [[13.41, 52.51, 40], [13.42, 52.52, 41]]},
               "properties": {"name": "ride", "coordTimes": ["2020-01-01T00:01:00Z", "2020-01-01T00:02:00Z"]}},
              {"type": "Feature", "geometry": {"type": "MultiLineString", "coordinates": [[[1, 2], [3, 4]], [[5, 6]]]},
               "properties": {"times": [[1577836800000, 1577836801000], [1577836802000]]}}
            ]}
            """#, suffix: ".geojson")
        defer { file.remove() }
        let (fixes, skipped) = try readAll(file.path)
        #expect(fixes.count == 6)
        #expect(skipped == ["missing_or_bad_time": 1])
        #expect(fixes[0].accuracy == 8)
        #expect(fixes[1].device == "ride" && fixes[1].altitude == 40 && fixes[2].time == 1_577_836_920)
        #expect(fixes[3].time == 1_577_836_800 && fixes[5].lon == 5 && fixes[5].time == 1_577_836_802)
    }

    @Test func takeoutRecordsInBothTimestampStyles() throws {
        let file = try TemporaryFile(
            #"""
            {"locations": [
              {"latitudeE7": 437789954, "longitudeE7": -794176419, "accuracy": 30,
               "activity": [{"activity": [{"type": "STILL"}], "timestamp": "1999-01-01T00:00:00Z"}],
               "timestamp": "2015-10-10T18:47:31.321Z"},
              {"timestampMs": "1444503000000", "latitudeE7": 437789000, "longitudeE7": -794176000},
              {"latitudeE7": 1}
            ]}
            """#, suffix: ".json")
        defer { file.remove() }
        let (fixes, skipped) = try readAll(file.path)
        #expect(fixes.count == 2)
        #expect(skipped == ["missing_or_bad_time": 1])
        #expect(fixes[0].time == 1_444_502_851.321 && fixes[0].lat == 43.7789954 && fixes[0].accuracy == 30)
        #expect(fixes[1].time == 1_444_503_000)
        let broken = try TemporaryFile("{\"locations\": [\n{\"latitudeE7\": 1,}\n]}", suffix: ".json")
        defer { broken.remove() }
        #expect {
            try readAll(broken.path)
        } throws: { error in
            (error as? TraceReadError)?.line == 2
        }
    }

    // MARK: - Line formats

    @Test func ownTracksRecorderLines() throws {
        let file = try TemporaryFile(
            """
            2015-08-24T05:55:07Z	*                 	{"tst":1440395361,"acc":30,"_type":"location","alt":51,"lon":10.02,"lat":52.37,"vel":36,"tid":"NE"}
            2015-08-24T05:55:14Z	-                 	{"tst":"1440363922","_type":"lwt"}
            2015-08-24T05:56:00Z	*                 	{"tst":"1440395400","_type":"location","lon":10.03,"lat":52.38}
            2015-08-24T05:57:00Z	*                 	{not json

            """, suffix: ".rec")
        defer { file.remove() }
        let (fixes, skipped) = try readAll(file.path)
        #expect(fixes.map(\.time) == [1_440_395_361, 1_440_395_400])
        #expect(fixes[0].device == "NE" && fixes[0].speed == 10 && fixes[0].accuracy == 30)
        #expect(skipped == ["malformed_record": 1])
    }

    @Test func geoLifePLTAndTCX() throws {
        let plt = try TemporaryFile(
            """
            Geolife trajectory
            WGS 84
            Altitude is in Feet
            Reserved 3
            0,2,255,My Track,0,0,2,8421376
            0
            39.984702,116.318417,0,492,39744.1201851852,2008-10-23,02:53:04
            39.984683,116.31845,0,-777,39744.1202546296,2008-10-23,02:53:10

            """, suffix: ".plt")
        let tcx = try TemporaryFile(
            """
            <?xml version="1.0"?><TrainingCenterDatabase xmlns="http://www.garmin.com/xmlschemas/TrainingCenterDatabase/v2"><Activities><Activity><Lap><Track>
            <Trackpoint><Time>2020-03-06T00:23:46.000Z</Time><Position><LatitudeDegrees>49.2699</LatitudeDegrees><LongitudeDegrees>-123.1075</LongitudeDegrees></Position><AltitudeMeters>71.5</AltitudeMeters><Extensions><ns3:TPX><ns3:Speed>4.44</ns3:Speed></ns3:TPX></Extensions></Trackpoint>
            <Trackpoint><Time>2020-03-06T00:23:47.000Z</Time><HeartRateBpm><Value>120</Value></HeartRateBpm></Trackpoint>
            </Track></Lap></Activity></Activities></TrainingCenterDatabase>
            """, suffix: ".tcx")
        defer {
            plt.remove()
            tcx.remove()
        }
        let geolife = try readAll(plt.path).fixes
        #expect(geolife.map(\.time) == [1_224_730_384, 1_224_730_390])
        #expect(abs((geolife[0].altitude ?? 0) - 149.9616) < 1e-9 && geolife[1].altitude == nil)
        let garmin = try readAll(tcx.path)
        #expect(garmin.fixes.count == 1 && garmin.fixes[0].speed == 4.44 && garmin.fixes[0].altitude == 71.5)
        #expect(garmin.skipped == ["no_position": 1])
    }

    @Test func gzipInputsAreReadAndTruncationIsAnError() async throws {
        let text = "time,lat,lon\n" + (0..<5000).map { "2020-01-01T00:00:00Z,1.\($0),2" }.joined(separator: "\n") + "\n"
        let plain = try TemporaryFile(text, suffix: ".csv")
        defer { plain.remove() }
        let gzipped = plain.path + ".gz"
        defer { try? FileManager.default.removeItem(atPath: gzipped) }
        let source = plain.path
        try await offThePool {
            let gzip = Process()
            gzip.executableURL = URL(fileURLWithPath: "/bin/sh")
            gzip.arguments = ["-c", "gzip -c '\(source)' > '\(gzipped)'"]
            try gzip.run()
            gzip.waitUntilExit()
        }
        #expect(try readAll(gzipped).fixes.count == 5000)
        let data = try Data(contentsOf: URL(fileURLWithPath: gzipped))
        let truncated = try TemporaryFile("", suffix: ".csv.gz")
        defer { truncated.remove() }
        try data.prefix(data.count / 2).write(to: URL(fileURLWithPath: truncated.path))
        #expect(throws: TraceReadError.self) { try readAll(truncated.path) }
    }

    // MARK: - Real traces

    @Test(
        .enabled(if: TestData.sharedAvailable, "needs ../shared/data beside the checkout"),
        arguments: [
            ("limerick/bus304_to_UL_2019-02-18.gpx", 2144, "304.1"),
            ("boston/blue_hills.gpx", 1285, nil),
            ("formats/apple_watch_route.gpx", 44, nil),
            ("zurich/google_trajectory.csv", 416, "1"),
            ("zurich/gpsies_trajectory.csv", 247, "1"),
            (
                "apple_health/zip_contents/apple_health_export/workout-routes/route_2019-06-11_3.00pm.gpx", 3,
                "Route 2019-06-11 3:00pm"
            ),
            ("google_takeout/records.json", 12, "records"),
            // GeoLife names the user (its folder), not the day.
            ("beijing/geolife_long/000/Trajectory/20081023025304.plt", 908, "000"),
            ("formats/owntracks-demo-iphone.rec", 23, "NE"),
            ("formats/garmin_connect.tcx", 316, "garmin_connect"),
            ("zurich/tour_hr.tcx", 465, nil),
        ] as [(String, Int, String?)])
    func realTraces(path: String, count: Int, device: String?) throws {
        let (fixes, _) = try readAll(TestData.sharedFile(path))
        #expect(fixes.count == count)
        if let device { #expect(fixes.allSatisfy { $0.device == device }) }
        #expect(
            fixes.allSatisfy { (-90...90).contains($0.lat) && (-180...180).contains($0.lon) && $0.time > 946_684_800 })
    }
}

@Suite struct PrefetchingReaderTests {
    @Test func deliversTheSameFixesAndErrorsAsTheReaderItWraps() throws {
        let text =
            "time,lat,lon\n" + (0..<10_000).map { "2020-01-01T00:00:00Z,1.\($0),2" }.joined(separator: "\n") + "\n"
        let file = try TemporaryFile(text, suffix: ".csv")
        defer { file.remove() }
        let path = file.path
        var direct = try TraceOpener.open(path, format: nil, device: nil)
        let prefetching = PrefetchingReader(batchSize: 333, depth: 2) { () throws(TraceReadError) in
            try TraceOpener.open(path, format: nil, device: nil)
        }
        while let fix = try direct.next() {
            #expect(try prefetching.next() == fix)
        }
        #expect(try prefetching.next() == nil)

        let broken = try TemporaryFile(
            "<gpx><trk>"
                + String(repeating: "<trkpt lat=\"1\" lon=\"2\"><time>2020-01-01T00:00:00Z</time></trkpt>", count: 500)
                + "</gpx>", suffix: ".gpx")
        defer { broken.remove() }
        let brokenPath = broken.path
        let failing = PrefetchingReader(batchSize: 100) { () throws(TraceReadError) in
            try TraceOpener.open(brokenPath, format: nil, device: nil)
        }
        var read = 0
        #expect(throws: TraceReadError.self) {
            while try failing.next() != nil { read += 1 }
        }
        #expect(read == 500)
    }

    /// A CSV read in batches (copied out of a parsed chunk) gives the fixes and the skipped
    /// counts one read fix by fix gives, in order, from any point: over several chunks,
    /// with a fleet's device column, bad rows, and a device given for every fix.
    @Test(arguments: [nil, "given"])
    func csvBatchesAreTheFixesOneByOne(device: String?) throws {
        let rows = (0..<30_000).map { index in
            index % 997 == 0
                ? "2020-01-01T00:00:00Z,not a number,2,v1" : "\(1_577_836_800 + index),1.\(index),2,v\(index % 3)"
        }
        let file = try TemporaryFile("time,lat,lon,device\n" + rows.joined(separator: "\n") + "\n", suffix: ".csv")
        defer { file.remove() }
        var oneByOne = try TraceOpener.open(file.path, format: nil, device: device)
        var expected: [Fix] = []
        while let fix = try oneByOne.next() { expected.append(fix) }
        var batched = try TraceOpener.open(file.path, format: nil, device: device)
        var fixes: [Fix] = []
        // A few fixes one by one first: batches go on from there.
        for _ in 0..<5 { fixes.append(try #require(try batched.next())) }
        var batches = 0
        while let batch = try batched.nextBatch(upTo: 1_000) {
            #expect(!batch.isEmpty && batch.count <= 1_000)
            fixes += batch
            batches += 1
        }
        #expect(fixes == expected)
        #expect(batches > 2)
        #expect(batched.skipped == oneByOne.skipped)
        #expect(batched.skipped["missing_or_bad_coordinates"] == 31)
    }
}
