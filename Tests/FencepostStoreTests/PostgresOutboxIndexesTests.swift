import FencepostCore
import FencepostServerTestSupport
import Foundation
import Testing

@testable import FencepostStore

/// On PostgreSQL an event's or visit's outbox row, written pending, gets entries in the primary
/// key and `outbox_references` only: a big ingest's commit adds every outbox row under the
/// numbering lock. `outbox_by_entity` gave way to `outbox_regions` (v21), over the regions'
/// rows, which a region-only pull reads; `outbox_by_status` to `outbox_settled` (v22), over the
/// rows past pending, which a push's recovery, the cleanup and the dead-letter list read. The
/// push queue claims its rows along the primary key from its mark (``OutboxPendingMark``;
/// `OutboxClaimTests` has the plan of a claim over a table big enough for it to matter).
@Suite(.enabled(if: TestStores.onPostgres, "needs FENCEPOST_TEST_POSTGRES (tools/test's second run)"))
struct PostgresOutboxIndexesTests {
    static let migrations = ["v21-outbox-regions-by-seq", "v22-outbox-settled-by-status"]
    static let regionsOnly = "SELECT o.seq FROM outbox o WHERE o.seq > ? AND o.entity IN (?) ORDER BY o.seq LIMIT 10"
    static let inflight = "SELECT seq FROM outbox WHERE status = 'inflight'"
    static let dead = "SELECT seq FROM outbox WHERE status = 'dead' ORDER BY seq LIMIT 10"

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

    /// The plan of `sql` bound to `arguments` (as the store binds them), with sequential scans
    /// priced out: which index can answer it.
    static func plan(_ sql: String, _ arguments: [SQLValue] = [], in store: Store) async throws -> String {
        try await store.write { tx in
            try await tx.execute("SET LOCAL enable_seqscan = off")
            return try await tx.values("EXPLAIN " + sql, arguments).joined(separator: "\n")
        }
    }

    /// The readers by entity and by status each find their index.
    static func expectPlans(_ store: Store) async throws {
        #expect(try await plan(regionsOnly, [.integer(0), .text("region")], in: store).contains("outbox_regions"))
        #expect(try await plan(inflight, in: store).contains("outbox_settled"))
        #expect(try await plan(dead, in: store).contains("outbox_settled"))
    }

    @Test func aFreshStoresPendingRowsHaveNoEntryByEntityOrStatus() async throws {
        let store = try await TestStores.fresh()
        defer { TestStores.closeLater(store) }
        #expect(
            try await Self.indexes(store) == [
                "outbox_by_key", "outbox_pkey", "outbox_references", "outbox_regions", "outbox_settled",
            ])
        try await Self.enqueueEventsAndRegions(in: store)
        try await Self.expectPlans(store)
        let regions = try await store.syncChanges(after: 0, entities: [.region], device: nil, limit: 10)
        #expect(regions.map(\.mutation.id) == ["zone-10", "zone-30"])
        let events = try await store.syncChanges(after: regions[0].seq, entities: [.event], device: nil, limit: 100)
        #expect(events.map(\.mutation.id) == (11..<40).map { "event-\($0)" })
        // No row is past pending until a claim, which takes the lowest ones, along the primary
        // key, and puts them in flight.
        let settled = "SELECT COUNT(*) FROM outbox WHERE status IN ('inflight', 'delivered', 'dead')"
        #expect(try await store.read { tx in try await tx.value(settled) as Int64? } == 0)
        let claimed = try await store.claimPushBatch(limit: 5, maxBytes: .max)
        #expect(claimed.map(\.mutation.id) == (0..<5).map { "event-\($0)" })
        #expect(try await store.read { tx in try await tx.value(settled) as Int64? } == 5)
    }

    @Test func aStoreWithTheIndexesByEntityAndStatusLosesThemWhenOpened() async throws {
        let url = try await TestStores.createDatabase(on: try #require(TestStores.postgresURL))
        var store = try await Store.open(url)
        try await Self.enqueueEventsAndRegions(in: store)
        // The schema as the release before left it: both indexes, the migrations not applied.
        try await store.write { tx in
            try await tx.execute("DROP INDEX outbox_regions")
            try await tx.execute("DROP INDEX outbox_settled")
            try await tx.execute("CREATE INDEX outbox_by_entity ON outbox (entity, seq)")
            try await tx.execute("CREATE INDEX outbox_by_status ON outbox (status, seq)")
            for migration in Self.migrations {
                try await tx.execute("DELETE FROM fencepost_migrations WHERE name = ?", migration)
            }
        }
        #expect(try await Self.indexes(store).contains("outbox_by_status"))
        await store.close()

        store = try await Store.open(url)
        defer { TestStores.closeLater(store) }
        #expect(
            try await Self.indexes(store) == [
                "outbox_by_key", "outbox_pkey", "outbox_references", "outbox_regions", "outbox_settled",
            ])
        try await Self.expectPlans(store)
        // A store that never had a mark: the first claim walks from the first row.
        let claimed = try await store.claimPushBatch(limit: 100, maxBytes: .max)
        #expect(claimed.count == 42)
        #expect(claimed.map(\.seq) == claimed.map(\.seq).sorted())
    }
}
