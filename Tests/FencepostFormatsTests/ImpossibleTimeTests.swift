import FencepostCore
import FencepostFormats
import FencepostTestSupport
import Testing

/// A record whose time names a day its month does not have (31 February) or a time past the
/// end of the day (24:30) is skipped and counted as a bad time, in every reader that parses
/// text times: never read as a fix at some other time (3 March, half past midnight).
@Suite struct ImpossibleTimeTests {
    struct Input: CustomTestStringConvertible, Sendable {
        var name: String
        var suffix: String
        var text: String
        var skipped: [String: Int]
        var testDescription: String { name }
    }

    static let inputs: [Input] = [
        Input(
            name: "CSV", suffix: ".csv",
            text: """
                time,lat,lon
                2025-02-28T12:00:00Z,52.5,13.4
                2025-02-31T12:00:00Z,52.5,13.4
                2025-06-01T24:30:00Z,52.5,13.4
                2023-02-29 08:00:00,52.5,13.4

                """, skipped: ["missing_or_bad_time": 3]),
        Input(
            name: "GPX", suffix: ".gpx",
            text: """
                <gpx><trk><trkseg>
                <trkpt lat="52.5" lon="13.4"><time>2025-02-28T12:00:00Z</time></trkpt>
                <trkpt lat="52.5" lon="13.4"><time>2025-02-31T12:00:00Z</time></trkpt>
                <trkpt lat="52.5" lon="13.4"><time>2025-06-01T24:30:00Z</time></trkpt>
                <trkpt lat="52.5" lon="13.4"><time>2023-02-29T08:00:00Z</time></trkpt>
                </trkseg></trk></gpx>
                """, skipped: ["bad_time": 3]),
        Input(
            name: "GeoJSON", suffix: ".geojson",
            text: #"""
                {"type": "FeatureCollection", "features": [
                  {"type": "Feature", "geometry": {"type": "Point", "coordinates": [13.4, 52.5]}, "properties": {"time": "2025-02-28T12:00:00Z"}},
                  {"type": "Feature", "geometry": {"type": "Point", "coordinates": [13.4, 52.5]}, "properties": {"time": "2025-02-31T12:00:00Z"}},
                  {"type": "Feature", "geometry": {"type": "Point", "coordinates": [13.4, 52.5]}, "properties": {"time": "2025-06-01T24:30:00Z"}},
                  {"type": "Feature", "geometry": {"type": "Point", "coordinates": [13.4, 52.5]}, "properties": {"time": "2023-02-29T08:00:00Z"}}
                ]}
                """#, skipped: ["missing_or_bad_time": 3]),
        Input(
            name: "GeoLife PLT", suffix: ".plt",
            text: """
                Geolife trajectory
                WGS 84
                Altitude is in Feet
                Reserved 3
                0,2,255,My Track,0,0,2,8421376
                0
                52.5,13.4,0,100,45716.5,2025-02-28,12:00:00
                52.5,13.4,0,100,45719.5,2025-02-31,12:00:00
                52.5,13.4,0,100,45809.0,2025-06-01,24:30:00
                52.5,13.4,0,100,44986.3,2023-02-29,08:00:00

                """, skipped: ["missing_or_bad_time": 3]),
    ]

    @Test(arguments: inputs)
    func impossibleDatesAndTimesAreSkippedAsBadTimes(input: Input) throws {
        let file = try TemporaryFile(input.text, suffix: input.suffix)
        defer { file.remove() }
        var reader = try TraceOpener.open(file.path, format: nil, device: nil)
        var fixes: [Fix] = []
        while let fix = try reader.next() { fixes.append(fix) }
        #expect(fixes.map(\.time) == [1_740_744_000], "only 28 February is a time")
        #expect(reader.skipped == input.skipped)
    }
}
