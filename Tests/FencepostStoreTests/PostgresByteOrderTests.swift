import FencepostCore
import FencepostGeometry
import FencepostServerTestSupport
import Foundation
import Testing

@testable import FencepostStore

/// On PostgreSQL, the store's text is compared byte by byte, as SQLite compares it, whatever
/// the database's collation: a database made in an English collation (where "home" sorts
/// before "Office") lists regions in SQLite's order, and a store made before gets its columns
/// changed when opened.
@Suite(.enabled(if: TestStores.onPostgres, "needs FENCEPOST_TEST_POSTGRES (tools/test's second run)"))
struct PostgresByteOrderTests {
    static let migration = "v20-text-in-byte-order"
    static let ids = ["home", "Office", "alpha", "_draft", "Zone9", "zone-1", "b.2", "A:1"]
    /// SQLite's order of ``ids``: their bytes'.
    static let byteOrder = ["A:1", "Office", "Zone9", "_draft", "alpha", "b.2", "home", "zone-1"]

    /// A database whose own collation is ICU's English (Debian's PostgreSQL is built with ICU).
    static func englishDatabase() async throws -> String {
        try await TestStores.createDatabase(
            on: try #require(TestStores.postgresURL),
            options: "TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C.UTF-8'")
    }

    static func circle(_ id: String) -> Region {
        Region(id: id, shape: .circle(center: Position(lon: -8.62, lat: 52.66), radius: 25))
    }

    /// The store's text columns that are not in the "C" collation.
    static func columnsNotInByteOrder(_ store: Store) async throws -> [String] {
        try await store.read { tx in
            try await tx.values(
                """
                SELECT table_name || '.' || column_name FROM information_schema.columns
                WHERE table_schema = current_schema() AND data_type = 'text' AND collation_name IS DISTINCT FROM 'C'
                ORDER BY 1
                """)
        }
    }

    @Test func anEnglishDatabaseListsRegionsInSQLitesOrder() async throws {
        let store = try await Store.open(try await Self.englishDatabase())
        defer { TestStores.closeLater(store) }
        let values = Self.ids.map { "('\($0)')" }.joined(separator: ", ")
        let ownOrder: [String] = try await store.read { tx in
            try await tx.values("SELECT id FROM (VALUES \(values)) AS v (id) ORDER BY id")
        }
        // The database's own order is not the bytes' (else this test could not fail).
        #expect(ownOrder != Self.byteOrder)

        try await store.applyRegions(Self.ids.map(Self.circle))
        let listed = try await store.monitoredRegions().map(\.region.id)
        #expect(listed == Self.byteOrder)

        let sqlite = try Store.inMemory()
        try await sqlite.applyRegions(Self.ids.map(Self.circle))
        #expect(try await sqlite.monitoredRegions().map(\.region.id) == listed)
        #expect(try await Self.columnsNotInByteOrder(store).isEmpty)
    }

    @Test func aStoreMadeBeforeComparesBytesOnceOpened() async throws {
        let url = try await Self.englishDatabase()
        var store = try await Store.open(url)
        try await store.applyRegions(Self.ids.map(Self.circle))
        // The columns as the release before left them: the database's collation.
        try await store.write { tx in
            try await tx.execute(
                "ALTER TABLE regions ALTER COLUMN id TYPE text COLLATE \"default\", ALTER COLUMN name TYPE text COLLATE \"default\""
            )
            try await tx.execute("ALTER TABLE events ALTER COLUMN device TYPE text COLLATE \"default\"")
            try await tx.execute("DELETE FROM fencepost_migrations WHERE name = ?", Self.migration)
        }
        #expect(try await Self.columnsNotInByteOrder(store) == ["events.device", "regions.id", "regions.name"])
        #expect(try await store.monitoredRegions().map(\.region.id) != Self.byteOrder)
        await store.close()

        store = try await Store.open(url)
        defer { TestStores.closeLater(store) }
        #expect(try await Self.columnsNotInByteOrder(store).isEmpty)
        #expect(try await store.monitoredRegions().map(\.region.id) == Self.byteOrder)
    }
}
