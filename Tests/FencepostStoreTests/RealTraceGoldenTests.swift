import FencepostCore
import FencepostFormats
import FencepostGeometry
import FencepostIngest
import FencepostServerTestSupport
import FencepostStore
import FencepostTestSupport
import Foundation
import Testing

/// Whole-pipeline checks on the real traces and regions in ../shared/data.
@Suite(.enabled(if: TestData.sharedAvailable, "needs ../shared/data beside the checkout"))
struct RealTraceGoldenTests {
    static let raw = MonitorSettings(hysteresis: 0, enterDelay: 0, exitDelay: 0, passThrough: false)

    func regions(_ path: String, _ options: RegionImportOptions) throws -> [Region] {
        let document = try JSONParser.parse(try TestData.sharedData(path))
        let config = RegionImport.convert(document, options: options).canonicalData()
        return try RegionConfig.merge([RegionConfigParser().parse(config, file: path)])
    }

    /// Ingests one trace into a fresh store; returns the store and the session's summary.
    func ingest(
        _ trace: String, regions: [Region], monitor: MonitorSettings = MonitorSettings(), maxAccuracy: Double = 200
    ) async throws -> (Store, IngestSummary) {
        try await Self.ingest(
            path: TestData.sharedFile(trace), regions: regions, monitor: monitor, maxAccuracy: maxAccuracy)
    }

    static func ingest(
        path: String, regions: [Region], monitor: MonitorSettings = MonitorSettings(), maxAccuracy: Double = 200
    ) async throws -> (Store, IngestSummary) {
        let store = try await TestStores.fresh()
        try await store.applyRegions(regions)
        let session = try await IngestSession(
            store: store, options: IngestOptions(monitor: monitor, filter: FixFilterSettings(maxAccuracy: maxAccuracy)))
        var reader = try TraceOpener.open(path, format: nil, device: nil)
        try await session.ingest { try reader.next() }
        return (store, session.summary)
    }

    /// Per region, the enter/exit sequence a per-fix containment test gives (fixes sorted by time).
    func bruteForce(_ trace: String, regions: [Region], maxAccuracy: Double = 200) throws -> [String: [String]] {
        var reader = try TraceOpener.open(TestData.sharedFile(trace), format: nil, device: nil)
        var fixes: [Fix] = []
        while let fix = try reader.next() {
            if fix.accuracy.map({ $0 <= maxAccuracy }) ?? true { fixes.append(fix) }
        }
        fixes.sort { $0.time < $1.time }
        let context = GEOSContext()
        var result: [String: [String]] = [:]
        for region in regions {
            guard case .area(let shape) = region.shape else { continue }
            let prepared = try Geometry(shape: shape, context: context).prepared()
            var inside = false
            for fix in fixes {
                let now = try prepared.covers(x: fix.lon, y: fix.lat)
                if now != inside { result[region.id, default: []].append(now ? "enter" : "exit") }
                inside = now
            }
        }
        return result
    }

    func kindsByRegion(_ store: Store) async throws -> [String: [String]] {
        var result: [String: [String]] = [:]
        try await store.forEachEvent(EventQuery()) { event in
            if event.kind != "dwell" { result[event.region ?? "", default: []].append(event.kind) }
        }
        return result
    }

    @Test func zurichGoogleTraceFlapsRawAndSettlesWithTheDefaults() async throws {
        let districts = try regions(
            "zurich/stadtkreise.geojson", RegionImportOptions(idProperty: "Kreisnummer", idPrefix: "zh-kreis-"))
        // Every fix, even the poor ones: the 140 district changes of the raw trace.
        let (rawStore, rawSummary) = try await ingest(
            "zurich/google_trajectory.csv", regions: districts, monitor: Self.raw, maxAccuracy: 1e9)
        #expect(rawSummary.events[.enter] == 141 && rawSummary.events[.exit] == 140)
        await #expect(
            try kindsByRegion(rawStore)
                == bruteForce("zurich/google_trajectory.csv", regions: districts, maxAccuracy: 1e9))

        // With the accuracy filter and the default hysteresis, the flapping collapses.
        let (_, filteredRaw) = try await ingest("zurich/google_trajectory.csv", regions: districts, monitor: Self.raw)
        let (store, summary) = try await ingest("zurich/google_trajectory.csv", regions: districts)
        #expect(summary.dropped[.lowAccuracy] == 199)
        let rawVisits = filteredRaw.visitsOpened
        let visits = summary.visitsOpened
        #expect(rawVisits == 101)
        #expect(visits <= rawVisits / 10, "\(visits) visits from \(rawVisits) raw")
        // The trace stays inside the city: at the end the device is in at least one district.
        var open = 0
        try await store.forEachVisit(openOnly: true) { _ in open += 1 }
        #expect(open >= 1)
    }

    @Test func torontoTakeoutRecordsMatchBruteForceRaw() async throws {
        let neighbourhoods = try regions(
            "toronto/toronto_neighbourhoods.geojson",
            RegionImportOptions(idProperty: "AREA_SHORT_CODE", idPrefix: "toronto:"))
        let (store, _) = try await ingest("google_takeout/records.json", regions: neighbourhoods, monitor: Self.raw)
        await #expect(try kindsByRegion(store) == bruteForce("google_takeout/records.json", regions: neighbourhoods))
    }
}

/// The sample the project ships (regions/ and samples/): always there, so never skipped.
@Suite struct SampleTraceGoldenTests {
    @Test func limerickBusVisitsEachOfItsStopsOnce() async throws {
        let stops = try RegionConfigLoader.load([TestData.packageRoot.appendingPathComponent("regions").path])
        #expect(stops.count == 36)
        let trace = TestData.packageRoot.appendingPathComponent("samples/bus304_to_UL_2019-02-18.gpx").path
        let (store, summary) = try await RealTraceGoldenTests.ingest(path: trace, regions: stops)
        #expect(summary.fixesAccepted == 2144)
        var visitsByStop: [String: Int] = [:]
        try await store.forEachVisit { visitsByStop[$0.region, default: 0] += 1 }
        #expect(visitsByStop.count == 36)
        #expect(visitsByStop.values.allSatisfy { $0 == 1 })
        #expect(summary.events[.dwell] ?? 0 > 0, "the stops have a 20 s dwell")
    }
}
