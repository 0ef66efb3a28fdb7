import FencepostCore
import FencepostFormats
import FencepostTestSupport
import Foundation
import Testing

/// Google Maps Timeline exported from the phone, against fixtures written from the published
/// structure (Tests/Fixtures/google-timeline): one day in Zürich, walking from home to the
/// office at 08:00–08:30 (+01:00) and back at 17:00–17:30. Android's Timeline.json has the
/// morning only as a timeline path and the evening also as raw signals (every 2 min); iOS's
/// location-history.json has both walks as timeline paths (every 5 min).
@Suite struct TimelineTraceReaderTests {
    static let fixtures = TestData.packageRoot.appendingPathComponent("Tests/Fixtures/google-timeline")
    static let android = fixtures.appendingPathComponent("Timeline.json").path
    static let iOS = fixtures.appendingPathComponent("location-history.json").path
    /// 2024-03-05T08:00:00+01:00 and 17:00:00+01:00.
    static let morning = 1_709_622_000.0, evening = 1_709_622_000.0 + 9 * 3600

    func readAll(_ path: String, format: TraceFormat? = nil, device: String? = nil) throws -> (
        fixes: [Fix], skipped: [String: Int]
    ) {
        var reader = try TraceOpener.open(path, format: format, device: device)
        var fixes: [Fix] = []
        while let fix = try reader.next() { fixes.append(fix) }
        return (fixes, reader.skipped)
    }

    @Test func androidRawSignalsWhereThereAreAnyAndTheTimelinePathElsewhere() throws {
        let (fixes, skipped) = try readAll(Self.android)
        #expect(fixes.allSatisfy { $0.device == "Timeline" })
        let sorted = fixes.sorted { $0.time < $1.time }
        // The morning path (7 timed points), the 16 raw positions, the path point at 18:30.
        #expect(sorted.count == 24)
        let path = sorted.filter { $0.accuracy == nil }
        let pathTimes: [Double] = (0...6).map { Self.morning + Double($0) * 300 } + [Self.evening + 5400]
        #expect(path.map(\.time) == pathTimes)
        #expect(path.first?.lat == 47.3667 && path.first?.lon == 8.55)
        // The evening's path points (17:00–17:30 every 10 min) lie within the raw signals' cover.
        let raw = sorted.filter { $0.accuracy != nil }
        #expect(raw.map(\.time) == (0..<16).map { Self.evening + Double($0) * 120 })
        #expect(raw[1].accuracy == 12 && raw[1].altitude == 408.9 && raw[1].speed == 0.81)
        #expect(raw[0].lat == 47.378 && raw[0].lon == 8.54 && raw[15].lat == 47.3667 && raw[15].lon == 8.55)
        // A path point without a time, one with an unreadable position; a raw position at
        // "yesterday", one with a latitude alone. Wi-Fi scans, activity records, visits and
        // activities are not fixes and not errors.
        #expect(skipped == ["missing_or_bad_time": 2, "missing_or_bad_coordinates": 2])
    }

    @Test func iOSPathsTimedByMinutesFromTheSegmentStart() throws {
        let (fixes, skipped) = try readAll(Self.iOS, device: "phone")
        #expect(skipped.isEmpty)
        #expect(fixes.allSatisfy { $0.device == "phone" && $0.accuracy == nil })
        let morning: [Double] = (0...6).map { Self.morning + Double($0) * 300 }
        let evening: [Double] = (0...6).map { Self.evening + Double($0) * 300 }
        #expect(fixes.map(\.time) == morning + evening)
        #expect(fixes[0].lat == 47.3667 && fixes[0].lon == 8.55)
        #expect(fixes[6].lat == 47.378 && fixes[6].lon == 8.54)
        #expect(try readAll(Self.iOS).fixes.allSatisfy { $0.device == "location-history" })
    }

    @Test func theFormatIsDetectedFromTheContentWhateverTheFileIsCalled() throws {
        let renamedAndroid = try TemporaryFile(String(contentsOfFile: Self.android, encoding: .utf8), suffix: ".txt")
        let renamedIOS = try TemporaryFile(String(contentsOfFile: Self.iOS, encoding: .utf8), suffix: ".json")
        defer {
            renamedAndroid.remove()
            renamedIOS.remove()
        }
        #expect(try readAll(renamedAndroid.path).fixes.count == 24)
        #expect(try readAll(renamedIOS.path).fixes.count == 14)
        #expect(try readAll(Self.iOS, format: .timeline).fixes.count == 14)
        let notTimeline = try TemporaryFile(#"[{"lat": 1, "lon": 2}]"#, suffix: ".json")
        defer { notTimeline.remove() }
        #expect {
            try readAll(notTimeline.path)
        } throws: { error in
            (error as? TraceReadError)?.reason == "unsupported JSON array (a Google Timeline export from iOS expected)"
        }
    }

    /// An Android export written compactly, raw signals first: the path points are judged as
    /// they come. A path point 15 min from a raw position is covered; 15 min and 1 s is not.
    @Test func rawSignalsFirstAndTheCoverBoundary() throws {
        func point(_ seconds: Double, _ lat: Double) -> String {
            #"{"point":"\#(lat)°, 8.5°","time":"\#(Timestamp.format(seconds: seconds))"}"#
        }
        let raw = (0..<3).map {
            #"{"position":{"LatLng":"47.0°, 8.5°","accuracyMeters":10,"timestamp":"\#(Timestamp.format(seconds: 1000 + Double($0) * 60))"}}"#
        }
        let text =
            #"{"rawSignals":[\#(raw.joined(separator: ","))],"semanticSegments":[{"startTime":"1970-01-01T00:00:00Z","timelinePath":["#
            + [
                point(1000 - 901, 46.1), point(1000 - 900, 46.2), point(1100, 46.3), point(1120 + 900, 46.4),
                point(1120 + 901, 46.5),
            ].joined(separator: ",")
            + "]}]}"
        let file = try TemporaryFile(text, suffix: ".json")
        defer { file.remove() }
        let (fixes, _) = try readAll(file.path)
        #expect(fixes.map(\.lat) == [47, 47, 47, 46.1, 46.5])
    }

    /// More path points than a spool block, held back on disk until the raw signals (after
    /// them, as Android writes them) have been read: every one comes back, in order.
    @Test func manyHeldBackPathPointsComeBackFromTheSpool() throws {
        let count = 30_000
        let points = (0..<count).map {
            #"{"point":"\#(47 + Double($0) * 1e-6)°, 8.5°","time":"\#(Timestamp.format(seconds: Double($0) * 60))"}"#
        }
        let text =
            #"{"semanticSegments":[{"timelinePath":[\#(points.joined(separator: ",\n"))]}],"#
            + #""rawSignals":[{"position":{"LatLng":"47.5°, 8.5°","timestamp":"\#(Timestamp.format(seconds: 10_000 * 60))"}}]}"#
        let file = try TemporaryFile(text, suffix: ".json")
        defer { file.remove() }
        let (fixes, _) = try readAll(file.path)
        // The raw position at minute 10,000 covers minutes 9,985 to 10,015.
        let kept = (0..<count).filter { abs($0 - 10_000) > 15 }
        #expect(fixes.count == kept.count + 1)
        #expect(fixes.dropFirst().map(\.time) == kept.map { Double($0) * 60 })
        #expect(fixes.dropFirst().map(\.lat) == kept.map { 47 + Double($0) * 1e-6 })
        let spools = try FileManager.default.contentsOfDirectory(atPath: NSTemporaryDirectory()).filter {
            $0.hasPrefix("fencepost-spool-")
        }
        #expect(spools.isEmpty, "the spool's file is removed once read")
    }

    @Test(arguments: [
        (
            #"{"semanticSegments":[{"timelinePath":[{"point":"47°, 8°","time":"2024-01-01T00:00:00Z"}"#, 1,
            "unexpected end of file"
        ),
        (#"{"rawSignals":{"position":{}}}"#, 1, #""rawSignals" is not an array"#),
        ("{\"semanticSegments\":[\n{\"timelinePath\":[{\"point\":\"47°, 8°\",,}]}]}", 2, "invalid JSON"),
        (#"[{"startTime":"2024-01-01T00:00:00Z","timelinePath":[{"point":"geo:47,8"}]"#, 1, "unexpected end of file"),
    ])
    func malformedExportsAreRefusedWithFileAndLine(text: String, line: Int, reason: String) throws {
        let file = try TemporaryFile(text, suffix: ".json")
        defer { file.remove() }
        #expect {
            try readAll(file.path)
        } throws: { error in
            guard let error = error as? TraceReadError else { return false }
            return error.file == file.path && error.line == line && error.reason.contains(reason)
        }
    }

    @Test(arguments: [
        ("47.3769°, 8.5417°", 47.3769, 8.5417),
        ("-33.8688°, 151.2093°", -33.8688, 151.2093),
        ("geo:47.376900,8.541700", 47.3769, 8.5417),
        ("geo:-0.5,-78.25", -0.5, -78.25),
        ("47.3769,8.5417", 47.3769, 8.5417),
    ])
    func positionsInBothSpellings(text: String, lat: Double, lon: Double) throws {
        let file = try TemporaryFile(
            #"{"rawSignals":[{"position":{"LatLng":"\#(text)","timestamp":"2024-01-01T00:00:00Z"}}]}"#, suffix: ".json")
        defer { file.remove() }
        let fixes = try readAll(file.path).fixes
        #expect(fixes.count == 1 && fixes.first?.lat == lat && fixes.first?.lon == lon)
    }

    @Test(arguments: ["47.3769°", "geo:47.3769", "47.3769°, 8.5417°, 3°", "north, east", "geo:,8.5", ""])
    func unreadablePositionsAreSkippedAndCounted(text: String) throws {
        let file = try TemporaryFile(
            #"{"rawSignals":[{"position":{"LatLng":"\#(text)","timestamp":"2024-01-01T00:00:00Z"}}]}"#, suffix: ".json")
        defer { file.remove() }
        let (fixes, skipped) = try readAll(file.path)
        #expect(fixes.isEmpty && skipped == ["missing_or_bad_coordinates": 1])
    }
}
