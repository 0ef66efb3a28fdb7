import FencepostCore
import FencepostServerTestSupport
import Foundation
import Testing

@testable import FencepostStore

/// On PostgreSQL, `outbox_references` (the rows that refer to their event, visit or region, by
/// id) is a hash index: a fresh store has it, a store migrated from the btree before gets it,
/// and the lookups by id that need it (one id, a list of ids) are answered through it.
@Suite(.enabled(if: TestStores.onPostgres, "needs FENCEPOST_TEST_POSTGRES (tools/test's second run)"))
struct PostgresOutboxIndexTests {
    static let migration = "v19-outbox-references-hashed"

    /// The index method of `outbox_references` and its predicate.
    static func referencesIndex(_ store: Store) async throws -> (method: String, predicate: String) {
        try await store.read { tx in
            let row = try #require(
                try await tx.rows(
                    """
                    SELECT am.amname AS method, pg_get_expr(i.indpred, i.indrelid) AS predicate
                    FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am am ON am.oid = c.relam
                    WHERE c.relname = 'outbox_references'
                    """
                ).first)
            return (row["method"], row["predicate"])
        }
    }

    /// Rows referring to events `event-0`..., one with its payload stored (not referring).
    static func enqueue(_ count: Int, in store: Store) async throws {
        try await store.write { tx in
            for index in 0..<count {
                try await tx.enqueue(
                    OutboxRow(
                        entity: .event, id: "event-\(index)", version: 1, payload: index == 0 ? "{}" : nil,
                        createdAt: "2026-11-26T00:00:00.000Z"))
            }
        }
    }

    /// The plan of `sql`, with sequential scans priced out: whether the index can answer it.
    static func plan(_ sql: String, in store: Store) async throws -> String {
        try await store.write { tx in
            try await tx.execute("SET LOCAL enable_seqscan = off")
            return try await tx.values("EXPLAIN " + sql).joined(separator: "\n") as String
        }
    }

    @Test func aFreshStoreFindsTheRowsReferringToAnIdThroughAHashIndex() async throws {
        let store = try await TestStores.fresh()
        defer { TestStores.closeLater(store) }
        let index = try await Self.referencesIndex(store)
        #expect(index.method == "hash")
        #expect(index.predicate == "(payload IS NULL)")

        try await Self.enqueue(50, in: store)
        let one = "SELECT seq FROM outbox WHERE entity_id = 'event-7' AND payload IS NULL AND entity = 'event'"
        // (Without the entity, which the planner may look up in outbox_by_entity instead in a
        // table this small.)
        let list =
            "SELECT entity_id FROM outbox WHERE payload IS NULL AND entity_id IN ('event-0', 'event-3', 'event-9')"
        #expect(try await Self.plan(one, in: store).contains("outbox_references"))
        #expect(try await Self.plan(list, in: store).contains("outbox_references"))
        #expect(try await store.read { tx in try await tx.values(one) as [Int64] }.count == 1)
        // event-0's row holds its payload: it refers to nothing, and is not in the index.
        #expect(
            try await store.read { tx in try await tx.values(list) as [String] }.sorted() == ["event-3", "event-9"])
    }

    @Test func aStoreWithTheBtreeIndexGetsTheHashIndexWhenOpened() async throws {
        let url = try await TestStores.createDatabase(on: try #require(TestStores.postgresURL))
        var store = try await Store.open(url)
        try await Self.enqueue(20, in: store)
        // The schema as the release before left it: the btree, the migration not applied.
        try await store.write { tx in
            try await tx.execute("DROP INDEX outbox_references")
            try await tx.execute("CREATE INDEX outbox_references ON outbox (entity_id) WHERE payload IS NULL")
            try await tx.execute("DELETE FROM fencepost_migrations WHERE name = ?", Self.migration)
        }
        #expect(try await Self.referencesIndex(store).method == "btree")
        await store.close()

        store = try await Store.open(url)
        defer { TestStores.closeLater(store) }
        #expect(try await Self.referencesIndex(store).method == "hash")
        let applied: [String] = try await store.read { tx in
            try await tx.values("SELECT name FROM fencepost_migrations WHERE name = ?", [.text(Self.migration)])
        }
        #expect(applied == [Self.migration])
        let found: [String] = try await store.read { tx in
            try await tx.values(
                "SELECT entity_id FROM outbox WHERE entity_id IN ('event-0', 'event-5', 'event-19') AND payload IS NULL"
            )
        }
        #expect(found.sorted() == ["event-19", "event-5"])
    }
}
