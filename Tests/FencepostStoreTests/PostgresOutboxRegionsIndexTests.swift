import FencepostCore
import FencepostServerTestSupport
import Foundation
import Testing

@testable import FencepostStore

/// On PostgreSQL the outbox has no index by entity over every row (v21): a big ingest's commit
/// would add an entry per event and visit under the numbering lock. A region-only change feed
/// still skips the events through `outbox_regions`, a partial index over the regions' rows;
/// readers of events walk the primary key from their cursor.
@Suite(.enabled(if: TestStores.onPostgres, "needs FENCEPOST_TEST_POSTGRES (tools/test's second run)"))
struct PostgresOutboxRegionsIndexTests {
    static let migration = "v21-outbox-regions-by-seq"
    static let regionsOnly = "SELECT o.seq FROM outbox o WHERE o.seq > ? AND o.entity IN (?) ORDER BY o.seq LIMIT 10"

    /// The outbox's indexes, by name.
    static func indexes(_ store: Store) async throws -> [String] {
        try await store.read { tx in
            try await tx.values("SELECT indexname FROM pg_indexes WHERE tablename = 'outbox' ORDER BY indexname")
        }
    }

    /// 40 event rows with 2 region rows among them (after the 10th and the 30th).
    static func enqueueEventsAndRegions(in store: Store) async throws {
        try await store.write { tx in
            for index in 0..<40 {
                try await tx.enqueue(
                    OutboxRow(entity: .event, id: "event-\(index)", version: 1, createdAt: "2026-11-26T00:00:00.000Z"))
                if index == 10 || index == 30 {
                    try await tx.enqueue(
                        OutboxRow(
                            entity: .region, id: "zone-\(index)", version: 1, payload: "{}",
                            createdAt: "2026-11-26T00:00:00.000Z"))
                }
            }
        }
    }

    /// The plan of the region-only query, bound as the change feed binds it, with sequential
    /// scans priced out.
    static func regionsOnlyPlan(_ store: Store) async throws -> String {
        try await store.write { tx in
            try await tx.execute("SET LOCAL enable_seqscan = off")
            return try await tx.values("EXPLAIN " + regionsOnly, [.integer(0), .text("region")]).joined(
                separator: "\n")
        }
    }

    @Test func aFreshStoreFindsTheRegionsRowsWithoutAnEntryPerEvent() async throws {
        let store = try await TestStores.fresh()
        defer { TestStores.closeLater(store) }
        #expect(
            try await Self.indexes(store) == [
                "outbox_by_key", "outbox_by_status", "outbox_pkey", "outbox_references", "outbox_regions",
            ])
        try await Self.enqueueEventsAndRegions(in: store)
        #expect(try await Self.regionsOnlyPlan(store).contains("outbox_regions"))
        let regions = try await store.syncChanges(after: 0, entities: [.region], device: nil, limit: 10)
        #expect(regions.map(\.mutation.id) == ["zone-10", "zone-30"])
        let events = try await store.syncChanges(after: regions[0].seq, entities: [.event], device: nil, limit: 100)
        #expect(events.map(\.mutation.id) == (11..<40).map { "event-\($0)" })
    }

    @Test func aStoreWithTheIndexByEntityLosesItWhenOpened() async throws {
        let url = try await TestStores.createDatabase(on: try #require(TestStores.postgresURL))
        var store = try await Store.open(url)
        try await Self.enqueueEventsAndRegions(in: store)
        // The schema as the release before left it: the index by entity, the migration not applied.
        try await store.write { tx in
            try await tx.execute("DROP INDEX outbox_regions")
            try await tx.execute("CREATE INDEX outbox_by_entity ON outbox (entity, seq)")
            try await tx.execute("DELETE FROM fencepost_migrations WHERE name = ?", Self.migration)
        }
        #expect(try await Self.indexes(store).contains("outbox_by_entity"))
        await store.close()

        store = try await Store.open(url)
        defer { TestStores.closeLater(store) }
        let indexes = try await Self.indexes(store)
        #expect(!indexes.contains("outbox_by_entity"))
        #expect(indexes.contains("outbox_regions"))
        #expect(try await Self.regionsOnlyPlan(store).contains("outbox_regions"))
        let regions = try await store.syncChanges(after: 0, entities: [.region], device: nil, limit: 10)
        #expect(regions.map(\.mutation.id) == ["zone-10", "zone-30"])
    }
}
