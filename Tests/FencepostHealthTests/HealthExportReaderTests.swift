import FencepostCore
import FencepostFormats
import FencepostTestSupport
import Foundation
import Testing

@testable import FencepostHealth

@Suite struct HealthDateTests {
    @Test func parsesTheExportFormatWithItsOffset() throws {
        let date = try #require(HealthDate("2023-01-14 23:30:00 -0500"))
        #expect(date.seconds == 1_673_757_000)  // 2023-01-15T04:30:00Z
        #expect(date.offset == -5 * 3600)
        #expect(date.localDate == "2023-01-14", "the record's own offset decides the day")
        #expect(date.offsetText == "-05:00")
        #expect(HealthDate("2023-03-26 02:15:00 +0130")?.localDate == "2023-03-26")
    }

    @Test(arguments: [
        "2023-01-14T23:30:00Z", "2023-01-14 23:30:00", "14/01/2023 23:30:00 -0500", "2023-13-14 23:30:00 -0500",
        "2023-02-29 08:00:00 -0500", "2023-04-31 08:00:00 -0500", "",
    ])
    func refusesOtherFormats(_ text: String) {
        #expect(HealthDate(text) == nil)
    }
}

@Suite struct HealthExportReaderTests {
    private func items(_ source: ByteSource) throws -> [HealthItem] {
        var reader = HealthExportReader(source: source)
        var items: [HealthItem] = []
        while let item = try reader.next() { items.append(item) }
        return items
    }

    @Test(.enabled(if: TestData.sharedAvailable, "needs ../shared/data beside the checkout"))
    func readsTheRealExportWithAnInlineRoute() throws {
        let items = try items(ByteSource(path: TestData.sharedFile("apple_health/export.xml")))
        let records = items.compactMap { if case .record(let record) = $0 { record } else { nil } }
        #expect(records.map(\.type) == ["HKQuantityTypeIdentifierBodyMassIndex", "HKQuantityTypeIdentifierHeartRate"])
        #expect(records[0].source == "Health Mate" && records[0].value == "22.5312")
        let workout = try #require(
            items.compactMap { if case .workout(let workout) = $0 { workout } else { nil } }.first)
        #expect(workout.activityType == "HKWorkoutActivityTypeRunning")
        #expect(abs((workout.duration ?? 0) - 311.65) < 0.01)
        #expect(abs((workout.distanceMetres ?? 0) - 800.13) < 0.01, "0.497 mi")
        #expect(workout.timeZone == "America/Los_Angeles")
        guard case .inline(let fixes)? = workout.route?.points else {
            Issue.record("no inline route")
            return
        }
        #expect(fixes.count == 2 && fixes[0].device == "Simon’s iPhone" && fixes[0].lat == 37.7777)
        #expect(items.filter { if case .activitySummary = $0 { true } else { false } }.count == 2)
    }

    @Test(.enabled(if: TestData.sharedAvailable, "needs ../shared/data beside the checkout"))
    func readsTheNewerLayoutWithAFileReference() throws {
        let export = try HealthExportFile(
            path: TestData.sharedFile("apple_health/zip_contents/apple_health_export/export.xml"))
        let items = try items(export.document())
        let workout = try #require(
            items.compactMap { if case .workout(let workout) = $0 { workout } else { nil } }.first)
        #expect(workout.route?.points == .file("/workout-routes/route_2019-06-11_3.00pm.gpx"))
        let gpx = try export.referencedFile("/workout-routes/route_2019-06-11_3.00pm.gpx")
        var reader = try TraceOpener.open(gpx, format: .gpx, device: "watch")
        var count = 0
        while try reader.next() != nil { count += 1 }
        #expect(count == 3)
    }

    @Test func anUnknownDateFormatNamesTheLine() throws {
        let xml = """
            <?xml version="1.0" encoding="UTF-8"?>
            <HealthData locale="en_US">
             <Record type="HKQuantityTypeIdentifierStepCount" sourceName="iPhone" unit="count" startDate="2023-01-14 07:00:00 -0500" endDate="2023-01-14 07:10:00 -0500" value="300"/>
             <Record type="HKQuantityTypeIdentifierStepCount" sourceName="iPhone" unit="count" startDate="14.01.2023 07:10" endDate="2023-01-14 07:20:00 -0500" value="200"/>
            </HealthData>
            """
        #expect {
            try items(ByteSource(name: "export.xml", bytes: Array(xml.utf8)))
        } throws: { error in
            let failure = error as? TraceReadError
            return failure?.line == 4 && failure?.reason.contains("unknown date format \"14.01.2023 07:10\"") == true
        }
    }

    @Test func aTruncatedZipIsRefused() throws {
        let file = try TemporaryFile("", suffix: ".zip")
        defer { file.remove() }
        // The local header's magic, then nothing: no central directory.
        try Data([0x50, 0x4B, 0x03, 0x04, 0, 0, 0]).write(to: URL(fileURLWithPath: file.path))
        #expect(throws: TraceReadError.self) { try HealthExportFile(path: file.path) }
    }
}
