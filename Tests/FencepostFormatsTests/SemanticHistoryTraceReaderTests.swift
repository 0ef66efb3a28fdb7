import FencepostCore
import FencepostFormats
import FencepostTestSupport
import Foundation
import Testing

/// Google Takeout's Semantic Location History: small files written from the published
/// structure (in both vintages of its times), then the real month in ../shared/data.
@Suite struct SemanticHistoryTraceReaderTests {
    func readAll(_ path: String, format: TraceFormat? = nil) throws -> (fixes: [Fix], skipped: [String: Int]) {
        var reader = try TraceOpener.open(path, format: format, device: nil)
        var fixes: [Fix] = []
        while let fix = try reader.next() { fixes.append(fix) }
        return (fixes, reader.skipped)
    }

    /// 2021-08-01T08:00:00Z.
    static let eight = 1_627_804_800.0

    /// A visit from 08:00 to 08:30, then a walk from 08:30 to 08:40 with two waypoints and two
    /// raw points (the later one first, as nothing promises their order). Newer exports.
    static let rfc3339 = """
        {"timelineObjects": [
          {"placeVisit": {
            "location": {"latitudeE7": 436532000, "longitudeE7": -793832000, "placeId": "p1",
                         "address": "Toronto", "accuracyMetres": 25},
            "duration": {"startTimestamp": "2021-08-01T08:00:00Z", "endTimestamp": "2021-08-01T08:30:00.500Z"},
            "otherCandidateLocations": [{"latitudeE7": 1, "longitudeE7": 1}]}},
          {"activitySegment": {
            "startLocation": {"latitudeE7": 436532000, "longitudeE7": -793832000},
            "endLocation": {"latitudeE7": 436600000, "longitudeE7": -793900000},
            "duration": {"startTimestamp": "2021-08-01T08:30:00.500Z", "endTimestamp": "2021-08-01T08:40:00Z"},
            "waypointPath": {"waypoints": [{"latE7": 436550000, "lngE7": -793850000},
                                           {"latE7": 436580000, "lngE7": -793880000}]},
            "simplifiedRawPath": {"points": [
              {"latE7": 436570000, "lngE7": -793870000, "accuracyMeters": 8, "timestamp": "2021-08-01T08:36:00Z"},
              {"latE7": 436540000, "lngE7": -793840000, "accuracyMeters": 5, "timestamp": "2021-08-01T08:33:00Z"}]}}}
        ]}
        """

    /// The same day as older exports wrote it: milliseconds since 1970, as strings.
    static let milliseconds = """
        {"timelineObjects": [
          {"placeVisit": {
            "location": {"latitudeE7": 436532000, "longitudeE7": -793832000, "accuracyMetres": 25},
            "duration": {"startTimestampMs": "1627804800000", "endTimestampMs": "1627806600500"}}},
          {"activitySegment": {
            "startLocation": {"latitudeE7": 436532000, "longitudeE7": -793832000},
            "endLocation": {"latitudeE7": 436600000, "longitudeE7": -793900000},
            "duration": {"startTimestampMs": "1627806600500", "endTimestampMs": 1627807200000},
            "waypointPath": {"waypoints": [{"latE7": 436550000, "lngE7": -793850000},
                                           {"latE7": 436580000, "lngE7": -793880000}]},
            "simplifiedRawPath": {"points": [
              {"latE7": 436570000, "lngE7": -793870000, "accuracyMeters": 8, "timestampMs": "1627806960000"},
              {"latE7": 436540000, "lngE7": -793840000, "accuracyMeters": 5, "timestampMs": "1627806780000"}]}}}
        ]}
        """

    @Test(arguments: [rfc3339, milliseconds])
    func visitsSegmentsAndRawPathsInTimeOrder(json: String) throws {
        let file = try TemporaryFile(json, suffix: ".json")
        defer { file.remove() }
        let (fixes, skipped) = try readAll(file.path)
        // The visit's start and end; the segment's start, its two raw points in time order,
        // its end. Waypoints have no time: skipped and counted.
        #expect(fixes.map { $0.time - Self.eight } == [0, 1800.5, 1800.5, 1980, 2160, 2400])
        #expect(skipped == ["untimed_waypoint": 2])
        #expect(fixes[0].lat == 43.6532 && fixes[0].lon == -79.3832 && fixes[0].accuracy == 25)
        #expect(fixes[1].lat == 43.6532 && fixes[1].accuracy == 25)
        #expect(fixes[3].lat == 43.654 && fixes[3].lon == -79.384 && fixes[3].accuracy == 5)
        #expect(fixes[5].lat == 43.66 && fixes[5].lon == -79.39 && fixes[5].accuracy == nil)
        let device = URL(fileURLWithPath: file.path).deletingPathExtension().lastPathComponent
        #expect(fixes.allSatisfy { $0.device == device })
    }

    @Test func objectsWithoutTimesOrPlacesAreSkippedAndCounted() throws {
        let file = try TemporaryFile(
            """
            {"timelineObjects": [
              {"placeVisit": {"location": {"latitudeE7": 1, "longitudeE7": 2},
                              "duration": {"startTimestamp": "yesterday", "endTimestamp": "2021-08-01T08:00:00Z"}}},
              {"placeVisit": {"location": {"placeId": "only a place id"},
                              "duration": {"startTimestamp": "2021-08-01T08:00:00Z"}}},
              {"placeVisit": {"location": {"placeId": "no coordinates"}, "centerLatE7": 10000000, "centerLngE7": 20000000,
                              "duration": {"startTimestamp": "2021-08-01T09:00:00Z", "endTimestamp": "2021-08-01T09:10:00Z"}}},
              {"somethingNew": {}}
            ]}
            """, suffix: ".json")
        defer { file.remove() }
        let (fixes, skipped) = try readAll(file.path)
        // The last visit's place is its centre: its location has no coordinates.
        #expect(fixes.map(\.time) == [Self.eight, Self.eight + 3600, Self.eight + 4200])
        #expect(fixes[1].lat == 1 && fixes[1].lon == 2 && fixes[2].lat == 1)
        #expect(
            skipped == ["missing_or_bad_time": 2, "missing_or_bad_coordinates": 1, "unknown_timeline_object": 1])
    }

    /// A drive whose end Google put 1.4 km from the place the visit names (as in the sample
    /// month, 2021-08-15), then a night there, then a drive from it.
    @Test func aVisitsLocationWinsOverTheEndOfTheSegmentBefore() throws {
        let json = """
            {"timelineObjects": [
              {"activitySegment": {
                "startLocation": {"latitudeE7": 436000000, "longitudeE7": -794000000},
                "endLocation": {"latitudeE7": 437700000, "longitudeE7": -794150000},
                "duration": {"startTimestamp": "2021-08-15T21:06:26Z", "endTimestamp": "2021-08-15T21:52:16.140Z"}}},
              {"placeVisit": {
                "location": {"latitudeE7": 437830000, "longitudeE7": -794150000},
                "duration": {"startTimestamp": "2021-08-15T21:52:16.140Z", "endTimestamp": "2021-08-16T13:42:16.131Z"}}},
              {"activitySegment": {
                "startLocation": {"latitudeE7": 437833000, "longitudeE7": -794150000},
                "endLocation": {"latitudeE7": 437000000, "longitudeE7": -794000000},
                "duration": {"startTimestamp": "2021-08-16T13:42:16.131Z", "endTimestamp": "2021-08-16T13:52:36Z"}}},
              {"activitySegment": {
                "startLocation": {"latitudeE7": 437000000, "longitudeE7": -794000000},
                "endLocation": {"latitudeE7": 436900000, "longitudeE7": -794000000},
                "duration": {"startTimestamp": "2021-08-16T13:52:36Z", "endTimestamp": "2021-08-16T14:10:00Z"}}}
            ]}
            """
        let file = try TemporaryFile(json, suffix: ".json")
        defer { file.remove() }
        let fixes = try readAll(file.path).fixes
        // The visit's start replaces the first drive's end; the second drive's start, at the
        // visit's end, comes after the visit's fix (the fix filter keeps the first of a time).
        #expect(fixes.map(\.lat) == [43.6, 43.783, 43.783, 43.7833, 43.7, 43.7, 43.69])
        // A segment's end with no visit after it (the file's last) is kept.
        #expect(fixes.last.map { Timestamp.format(Date(timeIntervalSince1970: $0.time)) } == "2021-08-16T14:10:00.000Z")
    }

    @Test func detectedApartFromRecordsJSONAndTimeline() throws {
        let file = try TemporaryFile(Self.rfc3339, suffix: ".json")
        defer { file.remove() }
        #expect(try readAll(file.path).fixes.count == 6)
        #expect(try readAll(file.path, format: .semantic).fixes.count == 6)
        // Read as Records.json it has no "locations": refused, not misread.
        #expect(throws: TraceReadError.self) { try readAll(file.path, format: .takeout) }
    }

    @Test func aTruncatedFileIsRefusedWithItsLine() throws {
        let file = try TemporaryFile(String(Self.rfc3339.prefix(400)), suffix: ".json")
        defer { file.remove() }
        #expect {
            try readAll(file.path)
        } throws: { error in
            (error as? TraceReadError)?.reason.contains("unexpected end of file") == true
        }
    }

    /// MANIFEST: 125 timelineObjects, 64 placeVisits and 61 activitySegments, 2021-08-01 →
    /// 08-26. Counted independently (python's json module): every visit and segment has a
    /// location and both times, so 125 × 2 = 250 fixes, less the 55 segment ends at the instant
    /// the next place visit starts; 120 simplifiedRawPath points (102 in segments, 18 in
    /// visits); 231 waypoints, none with a time.
    @Test(.enabled(if: TestData.sharedAvailable, "needs ../shared/data beside the checkout"))
    func theRealMonth() throws {
        let (fixes, skipped) = try readAll(TestData.sharedFile("google_takeout/semantic-2021-august.json"))
        #expect(fixes.count == 315)
        #expect(skipped == ["untimed_waypoint": 231])
        #expect(fixes.allSatisfy { $0.device == "semantic-2021-august" })
        // The first segment starts at 2021-08-01T00:22:28Z at 43.6996461, -79.8555542.
        #expect(fixes[0].time == 1_627_777_348 && fixes[0].lat == 43.6996461 && fixes[0].lon == -79.8555542)
        let times = fixes.map(\.time)
        #expect(Timestamp.format(Date(timeIntervalSince1970: times.max()!)).hasPrefix("2021-08-26"))
        // Within the MANIFEST's bbox -80.45,43.08,-73.55,45.53, written to 0.01°.
        #expect(fixes.allSatisfy { $0.lon >= -80.46 && $0.lon <= -73.54 && $0.lat >= 43.07 && $0.lat <= 45.54 })
    }
}
