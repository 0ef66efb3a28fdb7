import FencepostCore
import FencepostFormats
import FencepostServerTestSupport
import FencepostStore
import FencepostTestSupport
import Foundation
import Testing

/// Features applied from a config file are stored with the fingerprint of their text; a plan
/// recognises the same text again as the same region, unchanged, without reading it, and reads
/// everything else as before.
@Suite struct RegionSourceTests {
    static let features = [
        #"{"type":"Feature","geometry":{"type":"Point","coordinates":[8.5,47.37]},"properties":{"id":"a","radius":25}}"#,
        #"{"type":"Feature","geometry":{"type":"Point","coordinates":[8.6,47.38]},"properties":{"id":"b","radius":40,"name":"B"}}"#,
        #"{"type":"Feature","geometry":{"type":"Polygon","coordinates":[[[8.5,47.37],[8.51,47.37],[8.51,47.38],[8.5,47.37]]]},"properties":{"id":"square","hysteresis":5}}"#,
    ]

    static func collection(_ features: [String]) -> [UInt8] {
        Array(#"{"type":"FeatureCollection","features":[\#n\#(features.joined(separator: ",\n"))]}"#.utf8)
    }

    /// The config as `plan` and `apply` read it against the store.
    static func desired(_ features: [String], store: Store) async throws -> DesiredRegions {
        let file = RegionConfigParser().parse(
            collection(features), file: "regions.geojson", sources: try await store.regionSources())
        #expect(file.issues.isEmpty)
        return try #require(RegionConfig.desired([file]))
    }

    @Test func theSameTextIsRecognisedAndPlansAsAFullReadDoes() async throws {
        let store = try await TestStores.fresh()
        defer { TestStores.closeLater(store) }
        let first = try #require(try await store.applyRegions(try await Self.desired(Self.features, store: store)))
        #expect(first.summary == "3 to add, 0 to update, 0 to remove, 0 unchanged")

        let again = try await Self.desired(Self.features, store: store)
        #expect(again.regions.isEmpty)
        #expect(again.recognized.map(\.id) == ["a", "b", "square"])
        let recognized = try #require(try await store.planRegions(again))
        let read = try await store.planRegions(
            try RegionConfig.merge([RegionConfigParser().parse(Self.collection(Self.features), file: "r")]))
        #expect(recognized == read)
        #expect(recognized.summary == "0 to add, 0 to update, 0 to remove, 3 unchanged")
        #expect(again.boxes.map(\.bounds) == (try await store.monitoredRegions()).map(\.region.shape.bounds))
        let reapplied = try #require(try await store.applyRegions(again))
        #expect(reapplied.isEmpty)
        #expect((try await store.monitoredRegions()).allSatisfy { $0.version == 1 })
    }

    @Test func otherTextIsReadAndItsFingerprintRecordedOnApply() async throws {
        let store = try await TestStores.fresh()
        defer { TestStores.closeLater(store) }
        _ = try #require(try await store.applyRegions(try await Self.desired(Self.features, store: store)))
        // The same content spelled otherwise: read, unchanged, and recognised after the apply.
        var respelled = Self.features
        respelled[1] = respelled[1].replacingOccurrences(of: #""radius":40"#, with: #""radius": 40.0"#)
        // A real edit: read and updated.
        respelled[0] = respelled[0].replacingOccurrences(of: #""radius":25"#, with: #""radius":30"#)
        let edited = try await Self.desired(respelled, store: store)
        #expect(edited.regions.map(\.id) == ["a", "b"])
        #expect(edited.recognized.map(\.id) == ["square"])
        let plan = try #require(try await store.applyRegions(edited))
        #expect(plan.lines == ["~ update a: radius"])
        #expect(plan.unchanged == ["b", "square"])
        let after = try await Self.desired(respelled, store: store)
        #expect(after.regions.isEmpty)
        #expect(try #require(try await store.planRegions(after)).isEmpty)
        // The old texts of `a` and `b` are no region's any more.
        #expect(try await Self.desired(Self.features, store: store).regions.map(\.id) == ["a", "b"])
    }

    @Test func aRegionChangedSinceItWasRecognisedIsNotPlannedFromItsOldText() async throws {
        let store = try await TestStores.fresh()
        defer { TestStores.closeLater(store) }
        _ = try #require(try await store.applyRegions(try await Self.desired(Self.features, store: store)))
        let recognized = try await Self.desired(Self.features, store: store)
        // An edit that does not come from the file (the HTTP API, a pull) leaves no fingerprint.
        try await store.applyRegions { monitored in
            try await monitored().map { region in
                var region = region
                if region.id == "b" { region.name = "Bee" }
                return region
            }
        }
        #expect(try await store.planRegions(recognized) == nil)
        #expect(try await store.applyRegions(recognized) == nil)
        let fresh = try await Self.desired(Self.features, store: store)
        #expect(fresh.regions.map(\.id) == ["b"])
        #expect(try #require(try await store.planRegions(fresh)).lines == ["~ update b: name"])
    }

    @Test func aProblemAnywhereIsReportedAsAFullReadReportsIt() async throws {
        let store = try await TestStores.fresh()
        defer { TestStores.closeLater(store) }
        _ = try #require(try await store.applyRegions(try await Self.desired(Self.features, store: store)))
        let duplicate = Self.features + [Self.features[0]]
        let file = RegionConfigParser().parse(
            Self.collection(duplicate), file: "regions.geojson", sources: try await store.regionSources())
        #expect(RegionConfig.desired([file]) == nil)
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("sources-\(UUID()).geojson").path
        try Data(Self.collection(duplicate)).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let viaSources = #expect(throws: RegionConfigError.self) {
            try RegionConfigLoader.desired([path], sources: RegionSourceIndex())
        }
        let full = #expect(throws: RegionConfigError.self) { try RegionConfigLoader.load([path]) }
        #expect(viaSources?.issues.map(\.description) == full?.issues.map(\.description))
        let sources = try await store.regionSources()
        let recognizing = #expect(throws: RegionConfigError.self) {
            try RegionConfigLoader.desired([path], sources: sources)
        }
        #expect(recognizing?.issues.map(\.description) == full?.issues.map(\.description))
    }

    /// Features are recognised a batch of 4,096 at a time: across batches, recognised and read
    /// features keep the file's order, edits anywhere are read, and a syntax error in a feature
    /// that must be read is the error a full read gives.
    @Test func recognitionAcrossBatchesMatchesAFullRead() async throws {
        let store = try await TestStores.fresh()
        defer { TestStores.closeLater(store) }
        let circles = (0..<9_000).map { index in
            #"{"type":"Feature","geometry":{"type":"Point","coordinates":[\#(8 + Double(index) / 10_000),47.3]},"properties":{"id":"r\#(index)","radius":30}}"#
        }
        _ = try #require(try await store.applyRegions(try await Self.desired(circles, store: store)))
        var edited = circles
        for index in [0, 4_095, 4_096, 4_097, 8_191, 8_999] {
            edited[index] = edited[index].replacingOccurrences(of: #""radius":30"#, with: #""radius":31"#)
        }
        edited.insert(
            #"{"type":"Feature","geometry":{"type":"Point","coordinates":[9.5,47.3]},"properties":{"id":"new","radius":20}}"#,
            at: 5_000)
        let recognizing = try await Self.desired(edited, store: store)
        #expect(recognizing.recognized.count == 9_000 - 6)
        #expect(recognizing.regions.map(\.id) == ["new", "r0", "r4095", "r4096", "r4097", "r8191", "r8999"])
        let read = try await store.planRegions(
            try RegionConfig.merge([RegionConfigParser().parse(Self.collection(edited), file: "r")]))
        #expect(try #require(try await store.planRegions(recognizing)) == read)
        #expect(read.summary == "1 to add, 6 to update, 0 to remove, 8994 unchanged")

        var broken = edited
        broken[6_000] = broken[6_000].replacingOccurrences(of: #""radius":30"#, with: #""radius":30,,"#)
        let full = RegionConfigParser().parse(Self.collection(broken), file: "r")
        let viaSources = RegionConfigParser().parse(
            Self.collection(broken), file: "r", sources: try await store.regionSources())
        #expect(!full.issues.isEmpty)
        #expect(viaSources.issues.map(\.description) == full.issues.map(\.description))
    }
}
