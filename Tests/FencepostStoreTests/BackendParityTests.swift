import FencepostCore
import FencepostFormats
import FencepostGeometry
import FencepostIngest
import FencepostServerTestSupport
import FencepostStore
import FencepostTestSupport
import Foundation
import Testing

/// The same inputs into a SQLite store and a PostgreSQL one give byte for byte the same exports,
/// visits and change feed: the backends differ in how they store, never in what they answer.
@Suite(.enabled(if: TestStores.onPostgres, "needs FENCEPOST_TEST_POSTGRES (tools/test's second run)"))
struct BackendParityTests {
    static let regions = TestData.packageRoot.appendingPathComponent("regions").path
    static let trace = TestData.packageRoot.appendingPathComponent("samples/bus304_to_UL_2019-02-18.gpx").path

    /// The sample regions, the bus's journey, then half the stops removed (their open visits
    /// close with `region_removed`).
    static func fill(_ store: Store) async throws {
        let all = try RegionConfigLoader.load([regions])
        try await store.applyRegions(all)
        let session = try await IngestSession(store: store)
        var reader = try TraceOpener.open(trace, format: nil, device: "bus")
        try await session.ingest { try reader.next() }
        try await store.applyRegions(Array(all.sorted { $0.id < $1.id }.prefix(all.count / 2)))
    }

    static func export(_ format: ExportFormat, _ store: Store) async throws -> String {
        var sink = StringSink()
        try await EventExport.write(
            format, query: EventQuery(), zone: TimeZone(identifier: "Europe/Dublin"), from: store, to: &sink)
        return sink.text
    }

    /// A region edit's key ends in a nonce of its own (the same content applied twice is two
    /// edits): every other byte must agree.
    static func withoutEditNonce(_ change: SyncChange) -> SyncMutation {
        var mutation = change.mutation
        if mutation.entity == .region, let colon = mutation.key.lastIndex(of: ":") {
            mutation.key = String(mutation.key[..<colon])
        }
        return mutation
    }

    @Test func exportsVisitsAndTheChangeFeedAreTheSameOnBothBackends() async throws {
        let sqlite = try Store.inMemory()
        let postgres = try await TestStores.fresh()
        try await Self.fill(sqlite)
        try await Self.fill(postgres)

        for format in ExportFormat.allCases {
            let (one, other) = (try await Self.export(format, sqlite), try await Self.export(format, postgres))
            #expect(one == other, "\(format) differs")
            #expect(one.utf8.count > 1_000, "\(format): too little exported to mean anything")
        }
        var visits: [[String]] = [[], []]
        for (index, store) in [sqlite, postgres].enumerated() {
            try await store.forEachVisit(device: nil, region: nil) { visits[index].append($0.jsonText) }
        }
        #expect(visits[0] == visits[1])
        #expect(visits[0].contains { $0.contains("region_removed") })
        let feeds = (
            try await sqlite.syncChanges(after: 0, entities: nil, device: nil, limit: 100_000).map(
                Self.withoutEditNonce),
            try await postgres.syncChanges(after: 0, entities: nil, device: nil, limit: 100_000).map(
                Self.withoutEditNonce)
        )
        if feeds.0 != feeds.1 {
            let differing = zip(feeds.0, feeds.1).filter { $0 != $1 }.prefix(2).map { "\($0.0) != \($0.1)" }
            Issue.record("the change feeds differ (\(feeds.0.count) and \(feeds.1.count) rows): \(differing)")
        }
        #expect(feeds.0.count > 100)
        await postgres.close()
    }

    /// A device whose name a statement must carry as it is (an array's element too), in and out of a circle 6,000 times
    /// in one input: more events, visits and outbox rows than one statement writes, and more
    /// outbox rows than a transaction holds in memory before it sets them aside; both backends
    /// store them the same.
    @Test func manyEventsOfAnAwkwardlyNamedDeviceAreTheSameOnBothBackends() async throws {
        let grid = WalkGrid(origin: Position(lon: -8.62, lat: 52.66))
        // (No control characters: a device's name may not hold them.)
        let device = #"back\slash \N NULL, 'quote' "double" {brace,"array"}, ünïcødé 🚌"#
        let fixes: [Fix] = (0..<12_000).map { (number: Int) -> Fix in
            grid.fix(number % 2 == 0 ? 0 : 400, t: 60 * Double(number), device: device)
        }
        let sqlite = try Store.inMemory()
        let postgres = try await TestStores.fresh()
        defer { TestStores.closeLater(postgres) }
        var outputs: [[String]] = []
        for store in [sqlite, postgres] {
            try await store.applyRegions([grid.circle("a", x: 0, radius: 50)])
            let summary = try await StoreInputs.ingest(store, [fixes])
            #expect(summary.events[.enter] == 6_000, "\(summary.dropped) \(summary.skipped) \(summary.events)")
            var output = [try await Self.export(.jsonl, store)]
            try await store.forEachVisit(device: nil, region: nil) { output.append($0.jsonText) }
            output += try await store.syncChanges(after: 0, entities: nil, device: nil, limit: 100_000).map {
                "\(Self.withoutEditNonce($0))"
            }
            outputs.append(output)
        }
        #expect(outputs[0] == outputs[1])
        #expect(outputs[0].count > 18_000)
        var events: [EventRow] = []
        try await postgres.forEachEvent(EventQuery()) { events.append($0) }
        #expect(events.count == 12_000)
        #expect(events.allSatisfy { $0.device == device })
    }
}
