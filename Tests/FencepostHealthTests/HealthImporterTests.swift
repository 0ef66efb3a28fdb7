import FencepostCore
import FencepostFormats
import FencepostTestSupport
import Foundation
import Testing

@testable import FencepostHealth

/// Builds small exports record by record.
enum ExportXML {
    static func record(
        _ type: String, _ source: String, _ start: String, _ end: String, _ value: String, unit: String = "count",
        created: String? = nil
    ) -> String {
        let creation = created.map { " creationDate=\"\($0)\"" } ?? ""
        return
            "<Record type=\"\(type)\" sourceName=\"\(source)\" unit=\"\(unit)\"\(creation) startDate=\"\(start)\" endDate=\"\(end)\" value=\"\(value)\"/>"
    }

    static func steps(_ source: String, _ start: String, _ end: String, _ value: Int, created: String? = nil) -> String
    {
        record("HKQuantityTypeIdentifierStepCount", source, start, end, "\(value)", created: created)
    }

    /// A correlation holding `records`, which exports also repeat at top level.
    static func correlation(_ type: String, _ source: String, _ start: String, _ end: String, _ records: [String])
        -> String
    {
        "<Correlation type=\"\(type)\" sourceName=\"\(source)\" startDate=\"\(start)\" endDate=\"\(end)\">\n"
            + "<MetadataEntry key=\"HKWasUserEntered\" value=\"0\"/>\n" + records.joined(separator: "\n")
            + "\n</Correlation>"
    }

    static func document(_ records: [String]) -> ByteSource {
        let xml =
            "<?xml version=\"1.0\"?>\n<HealthData locale=\"en_US\">\n" + records.joined(separator: "\n")
            + "\n</HealthData>\n"
        return ByteSource(name: "export.xml", bytes: Array(xml.utf8))
    }
}

@Suite struct HealthImporterTests {
    private func plan(
        _ records: [String], anchors: [String: Double] = [:], options: HealthImportOptions = HealthImportOptions()
    ) throws -> HealthImportPlan {
        var reader = HealthExportReader(source: ExportXML.document(records))
        return try HealthImporter(options: options, anchors: anchors).plan(reading: &reader)
    }

    private func value(_ plan: HealthImportPlan, _ id: String) -> Double? {
        plan.events.first { $0.id == id }?.properties["value"]?.numberValue
    }

    @Test func theWatchCountsWhereItWasWornAndThePhoneElsewhere() throws {
        let watch = "Jane’s Apple\u{00A0}Watch"
        let phone = "Jane’s iPhone"
        let plan = try plan([
            // 08:00–09:00 both carried (the Watch's energy samples say it was worn): the Watch's
            // 500 count, the phone's 520 overlap them.
            ExportXML.record(
                "HKQuantityTypeIdentifierActiveEnergyBurned", watch, "2023-01-14 08:00:00 -0500",
                "2023-01-14 09:00:00 -0500", "30", unit: "kcal"),
            ExportXML.steps(watch, "2023-01-14 08:00:00 -0500", "2023-01-14 09:00:00 -0500", 500),
            ExportXML.steps(phone, "2023-01-14 08:00:00 -0500", "2023-01-14 09:00:00 -0500", 520),
            // 10:00–11:00 the Watch is worn (energy samples) but records no steps: the phone's
            // steps then were seen by the Watch as none.
            ExportXML.record(
                "HKQuantityTypeIdentifierActiveEnergyBurned", watch, "2023-01-14 10:00:00 -0500",
                "2023-01-14 11:00:00 -0500", "20", unit: "kcal"),
            ExportXML.steps(phone, "2023-01-14 10:00:00 -0500", "2023-01-14 11:00:00 -0500", 90),
            // 12:00–13:00 the Watch charges: only the phone was there. A Watch step sample
            // spanning the start of the charge does not claim those minutes.
            ExportXML.steps(watch, "2023-01-14 11:00:00 -0500", "2023-01-14 12:30:00 -0500", 0),
            ExportXML.steps(phone, "2023-01-14 12:00:00 -0500", "2023-01-14 13:00:00 -0500", 300),
        ])
        #expect(value(plan, "me:steps-2023-01-14") == 800)
        let sources = plan.events.first { $0.id == "me:steps-2023-01-14" }?.properties["sources"]?.objectValue
        #expect(sources?[watch]?.numberValue == 500 && sources?[phone]?.numberValue == 300)
    }

    @Test func aSampleAcrossLocalMidnightIsSplitByTime() throws {
        let plan = try plan([ExportXML.steps("iPhone", "2023-01-14 23:30:00 -0500", "2023-01-15 00:30:00 -0500", 100)])
        #expect(value(plan, "me:steps-2023-01-14") == 50)
        #expect(value(plan, "me:steps-2023-01-15") == 50)
        #expect(plan.events.first { $0.id == "me:steps-2023-01-15" }?.time == 1_673_758_800)  // local midnight, 05:00Z
    }

    @Test func sleepOfTwoSourcesIsOneNightWithoutOverlap() throws {
        let sleep = "HKCategoryTypeIdentifierSleepAnalysis"
        let plan = try plan([
            ExportXML.record(
                sleep, "Watch", "2023-01-14 23:00:00 -0500", "2023-01-15 03:00:00 -0500",
                "HKCategoryValueSleepAnalysisAsleepCore", unit: ""),
            ExportXML.record(
                sleep, "Watch", "2023-01-15 03:00:00 -0500", "2023-01-15 03:30:00 -0500",
                "HKCategoryValueSleepAnalysisAwake", unit: ""),
            ExportXML.record(
                sleep, "Watch", "2023-01-15 03:30:00 -0500", "2023-01-15 06:30:00 -0500",
                "HKCategoryValueSleepAnalysisAsleepDeep", unit: ""),
            ExportXML.record(
                sleep, "AutoSleep", "2023-01-14 22:45:00 -0500", "2023-01-15 06:40:00 -0500",
                "HKCategoryValueSleepAnalysisInBed", unit: ""),
            ExportXML.record(
                sleep, "AutoSleep", "2023-01-14 23:10:00 -0500", "2023-01-15 06:20:00 -0500",
                "HKCategoryValueSleepAnalysisAsleepUnspecified", unit: ""),
        ])
        let nights = plan.events.filter { $0.kind == .sleep }
        #expect(nights.map(\.id) == ["me:sleep-2023-01-15"])
        let night = try #require(nights.first?.properties)
        #expect(night["in_bed_minutes"]?.numberValue == 475)  // 22:45–06:40
        #expect(
            night["asleep_minutes"]?.numberValue == 420,
            "23:00–06:30 asleep by either source, less the 30 awake minutes")
        #expect(night["awake_minutes"]?.numberValue == 30)
        #expect(night["deep_minutes"]?.numberValue == 180)
    }

    @Test func anchorsLeaveOldRecordsAloneAndRecomputeTouchedDays() throws {
        let first = [
            ExportXML.steps(
                "iPhone", "2023-01-14 08:00:00 -0500", "2023-01-14 09:00:00 -0500", 100,
                created: "2023-01-14 09:05:00 -0500"),
            ExportXML.record(
                "HKQuantityTypeIdentifierBodyMass", "Scale", "2023-01-14 07:00:00 -0500", "2023-01-14 07:00:00 -0500",
                "70", unit: "kg", created: "2023-01-14 07:01:00 -0500"),
        ]
        let initial = try plan(first)
        #expect(initial.events.count == 2)
        let again = try plan(first, anchors: initial.anchors)
        #expect(again.events.isEmpty, "nothing is new")
        let later = try plan(
            first + [
                ExportXML.steps(
                    "iPhone", "2023-01-14 18:00:00 -0500", "2023-01-14 19:00:00 -0500", 40,
                    created: "2023-01-14 19:05:00 -0500")
            ], anchors: initial.anchors)
        #expect(
            later.events.map(\.id) == ["me:steps-2023-01-14"],
            "the touched day is recomputed, the old weight left alone")
        #expect(value(later, "me:steps-2023-01-14") == 140)
    }

    /// Distance, active energy and water per local day in the events' units, against sums
    /// worked out by hand: unit conversions, a sample across local midnight split by time, a
    /// worse-ranked source counted only where the better one was absent, and a food entry's
    /// water that the export has twice (in its correlation and at top level) counted once.
    @Test func distanceEnergyAndWaterDailyTotals() throws {
        let watch = "Jane’s Apple Watch"
        let distance = "HKQuantityTypeIdentifierDistanceWalkingRunning"
        let energy = "HKQuantityTypeIdentifierActiveEnergyBurned"
        let water = "HKQuantityTypeIdentifierDietaryWater"
        let foodWater = ExportXML.record(
            water, "MyFitnessPal", "2023-01-14 12:30:00 -0500", "2023-01-14 12:30:00 -0500", "330", unit: "mL")
        let plan = try plan([
            ExportXML.record(
                distance, "iPhone", "2023-01-14 08:00:00 -0500", "2023-01-14 08:30:00 -0500", "1.5", unit: "km"),
            ExportXML.record(
                distance, "iPhone", "2023-01-14 09:00:00 -0500", "2023-01-14 09:20:00 -0500", "1", unit: "mi"),
            ExportXML.record(
                distance, "iPhone", "2023-01-14 10:00:00 -0500", "2023-01-14 10:05:00 -0500", "250", unit: "m"),
            ExportXML.record(
                distance, "iPhone", "2023-01-14 23:00:00 -0500", "2023-01-15 01:00:00 -0500", "2", unit: "km"),
            // 08:00–09:00 the Watch was worn: the phone's 30 Cal over 08:30–09:30 count half.
            ExportXML.record(
                energy, watch, "2023-01-14 08:00:00 -0500", "2023-01-14 09:00:00 -0500", "120", unit: "kcal"),
            ExportXML.record(
                energy, "iPhone", "2023-01-14 08:30:00 -0500", "2023-01-14 09:30:00 -0500", "30", unit: "Cal"),
            ExportXML.record(
                energy, "iPhone", "2023-01-14 12:00:00 -0500", "2023-01-14 13:00:00 -0500", "418.4", unit: "kJ"),
            ExportXML.record(
                water, "iPhone", "2023-01-14 07:00:00 -0500", "2023-01-14 07:00:00 -0500", "250", unit: "mL"),
            ExportXML.record(
                water, "iPhone", "2023-01-14 11:00:00 -0500", "2023-01-14 11:00:00 -0500", "0.5", unit: "L"),
            ExportXML.record(
                water, "iPhone", "2023-01-14 15:00:00 -0500", "2023-01-14 15:00:00 -0500", "8", unit: "fl_oz_us"),
            ExportXML.correlation(
                "HKCorrelationTypeIdentifierFood", "MyFitnessPal", "2023-01-14 12:30:00 -0500",
                "2023-01-14 12:30:00 -0500", [foodWater]),
            foodWater,
        ])
        func total(_ id: String) -> (value: Double?, samples: Double?, unit: String?) {
            let properties = plan.events.first { $0.id == id }?.properties
            return (
                properties?["value"]?.numberValue, properties?["samples"]?.numberValue, properties?["unit"]?.stringValue
            )
        }
        #expect(total("me:distance-2023-01-14") == (4359.34, 4, "m"))  // 1500 + 1609.344 (a mile) + 250 + 1000 (half of 2 km)
        #expect(total("me:distance-2023-01-15") == (1000, 1, "m"))
        #expect(total("me:active_energy-2023-01-14") == (235, 3, "kcal"))  // 120 + 15 (half of 30) + 100 (418.4 kJ)
        #expect(total("me:water-2023-01-14") == (1316.59, 4, "mL"))  // 250 + 500 + 236.588 (8 US fl oz) + 330
        #expect(plan.events.filter { $0.kind == .water }.count == 1)
    }

    /// A blood-pressure correlation is one event with both values; its parts, which the export
    /// repeats at top level, are not events (nor a correlation's parts of other kinds twice).
    @Test func correlationsAreCountedOnce() throws {
        let systolic = ExportXML.record(
            "HKQuantityTypeIdentifierBloodPressureSystolic", "Omron", "2023-01-14 07:10:00 -0500",
            "2023-01-14 07:10:00 -0500", "121", unit: "mmHg")
        let diastolic = ExportXML.record(
            "HKQuantityTypeIdentifierBloodPressureDiastolic", "Omron", "2023-01-14 07:10:00 -0500",
            "2023-01-14 07:10:00 -0500", "79", unit: "mmHg")
        let plan = try plan([
            ExportXML.correlation(
                "HKCorrelationTypeIdentifierBloodPressure", "Omron", "2023-01-14 07:10:00 -0500",
                "2023-01-14 07:10:00 -0500", [systolic, diastolic]),
            systolic, diastolic,
        ])
        #expect(plan.events.map(\.kind) == [.bloodPressure])
        let reading = try #require(plan.events.first?.properties)
        #expect(
            reading["systolic"]?.numberValue == 121 && reading["diastolic"]?.numberValue == 79
                && reading["unit"]?.stringValue == "mmHg")
        #expect(plan.summary.correlations == 1 && plan.summary.records == 2)
        #expect(plan.summary.skipped == ["blood pressure part (counted in its correlation)": 2])
        #expect(plan.summary.new[.bloodPressure] == 1)
    }

    static let generator = TestData.packageRoot.deletingLastPathComponent().appendingPathComponent(
        "shared/bench/gen_health_export.py"
    ).path

    @Test(
        .enabled(
            if: FileManager.default.fileExists(atPath: generator),
            "needs ../shared/bench/gen_health_export.py beside the checkout"))
    func generatedExportStepsMatchTheTruth() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "fencepost-health-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let export = directory.appendingPathComponent("export.zip").path
        let truthPath = directory.appendingPathComponent("truth.csv").path
        let status = try await offThePool {
            let python = Process()
            python.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            python.arguments = [
                "python3", Self.generator, "--days", "21", "--seed", "5", "--out", export, "--truth", truthPath,
            ]
            try python.run()
            python.waitUntilExit()
            return python.terminationStatus
        }
        try #require(status == 0)

        var reader = HealthExportReader(source: try HealthExportFile(path: export).document())
        let plan = try HealthImporter(options: HealthImportOptions(), anchors: [:]).plan(reading: &reader)
        let truth = try String(contentsOfFile: truthPath, encoding: .utf8).split(separator: "\n").dropFirst().map {
            $0.split(separator: ",")
        }
        var errors: [Double] = []
        for row in truth {
            let ours = try #require(value(plan, "me:steps-\(row[0])"), "a steps event for \(row[0])")
            let expected = Double(row[1])!
            errors.append(abs(ours - expected) / expected)
        }
        #expect(errors.count == 21)
        #expect(errors.reduce(0, +) / Double(errors.count) < 0.015, "mean daily error under 1.5 %")
        #expect(errors.max()! < 0.03, "worst day under 3 %")
        #expect(plan.events.contains { $0.kind == .bloodPressure && $0.properties["systolic"] != nil })
        #expect(
            plan.routes.count
                == plan.events.filter { $0.kind == .workout && $0.properties["route_device"] != nil }.count)
    }
}
