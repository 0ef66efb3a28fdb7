import FencepostCore
import FencepostFormats
import FencepostTestSupport
import Foundation
import Testing

/// Files that hold a fleet: each fix's device from a column, a property or the record, any
/// header named by option, and times without a zone read in the zone given (else UTC).
@Suite struct FleetFileTests {
    func readAll(_ file: TemporaryFile, _ options: TraceReaderOptions = TraceReaderOptions()) throws -> (
        fixes: [Fix], skipped: [String: Int]
    ) {
        var reader = try TraceOpener.open(ByteSource(path: file.path), format: nil, options: options)
        var fixes: [Fix] = []
        while let fix = try reader.next() { fixes.append(fix) }
        return (fixes, reader.skipped)
    }

    /// 2020-06-30T00:05:00Z.
    static let midnight = 1_593_475_500.0

    // MARK: - CSV

    /// An AIS export as the US coast guard's MarineCadastre writes it: the vessel in `MMSI`,
    /// zone-less UTC times in `BaseDateTime`, upper-case headers, vessels interleaved in time.
    @Test func aisExportsNameEachRowsVessel() throws {
        let file = try TemporaryFile(
            """
            MMSI,BaseDateTime,LAT,LON,SOG,COG,Heading,VesselName
            367000001,2020-06-30T00:05:00,29.91,-90.07,0.1,12.0,511,ALPHA
            367000002,2020-06-30T00:05:01,29.92,-90.08,7.5,180.0,179,"BRAVO, II"
            367000001,2020-06-30T00:06:00,29.91,-90.07,0.0,12.0,511,ALPHA

            """, suffix: ".csv")
        defer { file.remove() }
        let (fixes, skipped) = try readAll(file)
        #expect(skipped.isEmpty)
        #expect(fixes.map(\.device) == ["367000001", "367000002", "367000001"])
        #expect(fixes.map(\.time) == [Self.midnight, Self.midnight + 1, Self.midnight + 60])
        #expect(fixes[1].lat == 29.92 && fixes[1].lon == -90.08 && fixes[1].speed == nil && fixes[1].accuracy == nil)
    }

    @Test(arguments: ["device", "Device_ID", "VEHICLE_ID", "mmsi", "tid", "user_id"])
    func theDeviceColumnIsFoundByName(header: String) throws {
        let file = try TemporaryFile("time,lat,lon,\(header)\n2020-06-30T00:05:00Z,1,2,bus-7\n", suffix: ".csv")
        defer { file.remove() }
        #expect(try readAll(file).fixes.map(\.device) == ["bus-7"])
    }

    /// Headers no usual name matches, each named by option; a device given still names every
    /// fix over the column.
    @Test func anyHeaderCanBeNamedForEachRole() throws {
        let file = try TemporaryFile(
            """
            unit;ts;northing;easting;err;lat
            7;2020-06-30T00:05:00Z;47.1;8.2;12;0
            8;1593475501;47.2;8.3;;0

            """, suffix: ".csv")
        defer { file.remove() }
        var options = TraceReaderOptions(
            deviceColumn: "UNIT", timeColumn: "ts", latColumn: "northing", lonColumn: "easting", accuracyColumn: "err")
        let (fixes, _) = try readAll(file, options)
        #expect(
            fixes == [
                Fix(device: "7", time: Self.midnight, lat: 47.1, lon: 8.2, accuracy: 12),
                Fix(device: "8", time: Self.midnight + 1, lat: 47.2, lon: 8.3),
            ])
        options.device = "truck"
        #expect(try readAll(file, options).fixes.map(\.device) == ["truck", "truck"])
    }

    @Test func aNamedColumnTheHeaderLacksRefusesTheFile() throws {
        let file = try TemporaryFile("time,lat,lon\n2020-06-30T00:05:00Z,1,2\n", suffix: ".csv")
        defer { file.remove() }
        #expect {
            try readAll(file, TraceReaderOptions(deviceColumn: "vessel"))
        } throws: { error in
            guard let error = error as? TraceReadError else { return false }
            return error.file == file.path && error.line == 1
                && error.reason == #"no column "vessel" for the device in the CSV header; found: time, lat, lon"#
        }
    }

    /// Zone-less times are wall-clock times in the zone given; times with Z or an offset, and
    /// epoch seconds, are read as written.
    @Test func zonelessTimesAreReadInTheZoneGiven() throws {
        let file = try TemporaryFile(
            """
            time,lat,lon,device
            2020-06-30T00:05:00,1,2,a
            2020-06-30T00:05:00Z,1,2,a
            2020-06-30T00:05:00+02:00,1,2,a
            1593475500,1,2,a
            2020-01-15 12:00:00,1,2,b

            """, suffix: ".csv")
        defer { file.remove() }
        #expect(
            try readAll(file).fixes.map(\.time) == [
                Self.midnight, Self.midnight, Self.midnight - 7200, Self.midnight, 1_579_089_600,
            ])
        let berlin = try #require(LocalTimeZone(identifier: "Europe/Berlin"))
        let times = try readAll(file, TraceReaderOptions(zone: berlin)).fixes.map(\.time)
        // Summer time (+02:00) in June, standard time (+01:00) in January.
        #expect(
            times == [Self.midnight - 7200, Self.midnight, Self.midnight - 7200, Self.midnight, 1_579_089_600 - 3600])
    }

    /// Around Berlin's changes of 2020: the hour repeated on 25 October is read the second
    /// time (+01:00); the hour skipped on 29 March with the offset from before the change.
    @Test func theZoneAcrossItsChanges() throws {
        var berlin = try #require(LocalTimeZone(identifier: "Europe/Berlin"))
        func local(_ text: String) -> Double { Timestamp.parse(text)! }
        #expect(berlin.utc(fromLocal: local("2020-10-25T01:30:00")) == local("2020-10-24T23:30:00"))
        #expect(berlin.utc(fromLocal: local("2020-10-25T02:30:00")) == local("2020-10-25T01:30:00"))
        #expect(berlin.utc(fromLocal: local("2020-10-25T03:30:00")) == local("2020-10-25T02:30:00"))
        #expect(berlin.utc(fromLocal: local("2020-03-29T01:30:00")) == local("2020-03-29T00:30:00"))
        #expect(berlin.utc(fromLocal: local("2020-03-29T02:30:00")) == local("2020-03-29T01:30:00"))
        #expect(berlin.utc(fromLocal: local("2020-03-29T03:30:00")) == local("2020-03-29T01:30:00"))
        #expect(LocalTimeZone(identifier: "Mars/Olympus_Mons") == nil)
    }

    // MARK: - GeoJSON and OwnTracks

    @Test func geoJSONFeaturesNameTheirDevice() throws {
        let file = try TemporaryFile(
            """
            {"type":"FeatureCollection","features":[
             {"type":"Feature","geometry":{"type":"Point","coordinates":[2,1]},"properties":{"time":"2020-06-30T00:05:00","device":"a","mmsi":367000001}},
             {"type":"Feature","geometry":{"type":"Point","coordinates":[2,1]},"properties":{"time":"2020-06-30T00:05:01Z","name":"b","mmsi":367000002}},
             {"type":"Feature","geometry":{"type":"Point","coordinates":[2,1]},"properties":{"time":"2020-06-30T00:05:02Z"}}
            ]}
            """, suffix: ".geojson")
        defer { file.remove() }
        let fallback = URL(fileURLWithPath: file.path).deletingPathExtension().lastPathComponent
        let (fixes, _) = try readAll(file)
        #expect(fixes.map(\.device) == ["a", "b", fallback])
        #expect(fixes.map(\.time) == [Self.midnight, Self.midnight + 1, Self.midnight + 2])
        let byMMSI = try readAll(
            file, TraceReaderOptions(deviceProperty: "mmsi", zone: LocalTimeZone(identifier: "America/New_York")))
        #expect(byMMSI.fixes.map(\.device) == ["367000001", "367000002", fallback])
        #expect(byMMSI.fixes[0].time == Self.midnight + 4 * 3600)
        #expect(try readAll(file, TraceReaderOptions(device: "one")).fixes.map(\.device) == ["one", "one", "one"])
    }

    /// A recorder file of several phones is a fleet by `tid`; `user/device` wins where a record's
    /// topic says it, or the file sits in the recorder's store layout (`rec/USER/DEVICE/`).
    @Test func ownTracksDevicesFromTopicLayoutOrTid() throws {
        let lines = """
            2015-08-24T05:55:07Z	*	{"tst":1440395361,"_type":"location","lon":10.02,"lat":52.37,"tid":"NE"}
            2015-08-24T05:55:08Z	*	{"tst":1440395362,"_type":"location","lon":10.02,"lat":52.37,"tid":"JP"}
            2015-08-24T05:55:09Z	*	{"tst":1440395363,"_type":"location","lon":10.02,"lat":52.37,"tid":"JP","topic":"owntracks/jane/phone"}

            """
        let flat = try TemporaryFile(lines, suffix: ".rec")
        defer { flat.remove() }
        #expect(try readAll(flat).fixes.map(\.device) == ["NE", "JP", "jane/phone"])

        let store = FileManager.default.temporaryDirectory.appendingPathComponent("fencepost-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: store) }
        let folder = store.appendingPathComponent("rec/jp/ipad")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let path = folder.appendingPathComponent("2015-08.rec").path
        try Data(lines.utf8).write(to: URL(fileURLWithPath: path))
        var reader = try TraceOpener.open(path, format: nil, device: nil)
        var devices: [String] = []
        while let fix = try reader.next() { devices.append(fix.device) }
        #expect(devices == ["jp/ipad", "jp/ipad", "jane/phone"])
    }
}
