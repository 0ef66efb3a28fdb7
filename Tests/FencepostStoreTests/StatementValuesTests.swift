import FencepostServerTestSupport
import Testing

@testable import FencepostStore

/// SQLite's reads bind their values through SQLite's C API, not GRDB's arguments: each kind of
/// value must reach SQLite as the same value and storage class (an empty text or blob is not
/// NULL), and a wrong number of values is an error, not a crash or a silent NULL.
@Suite(.disabled(if: TestStores.onPostgres, "SQLite's binding; PostgreSQL binds through postgres-nio"))
struct StatementValuesTests {
    @Test func everyKindOfValueReachesSQLiteAsBound() async throws {
        let store = try await TestStores.fresh()
        defer { TestStores.closeLater(store) }
        let cases: [(bound: SQLValue, read: SQLValue, storage: String)] = [
            (.text(""), .text(""), "text"),
            (.text("Zürich ⛴ \"quoted\" \\ line\nbreak"), .text("Zürich ⛴ \"quoted\" \\ line\nbreak"), "text"),
            (.blob([]), .blob([]), "blob"),
            (.blob([0, 1, 0xFF, 0]), .blob([0, 1, 0xFF, 0]), "blob"),
            (.integer(Int64.min), .integer(Int64.min), "integer"),
            (.integer(0), .integer(0), "integer"),
            (.double(-0.5), .double(-0.5), "real"),
            (.double(1e300), .double(1e300), "real"),
            (.bool(true), .integer(1), "integer"),
            (.bool(false), .integer(0), "integer"),
            (.null, .null, "null"),
        ]
        try await store.write { tx in
            for (bound, read, storage) in cases {
                let rows = try await tx.rows("SELECT ?1 AS value, typeof(?1) AS storage", [bound])
                #expect(rows.count == 1)
                #expect(rows.first?.values.first == read, "\(bound)")
                #expect(rows.first?["storage"] == storage, "\(bound)")
            }
            // Several values, and the same statement again with others: nothing of the first
            // binding is left.
            let sql = "SELECT ?1 AS a, ?2 AS b, ?3 AS c"
            let first = try await tx.rows(sql, [.text("x"), .integer(2), .blob([7])])
            #expect(first.first?.values == [.text("x"), .integer(2), .blob([7])])
            let second = try await tx.rows(sql, [.null, .double(0.25), .text("")])
            #expect(second.first?.values == [.null, .double(0.25), .text("")])
        }
    }

    @Test func aWrongNumberOfValuesIsRefused() async throws {
        let store = try await TestStores.fresh()
        defer { TestStores.closeLater(store) }
        try await store.write { tx in
            await #expect(throws: (any Error).self) { try await tx.rows("SELECT ?1 AS a, ?2 AS b", [.integer(1)]) }
            await #expect(throws: (any Error).self) {
                try await tx.rows("SELECT ?1 AS a", [.integer(1), .integer(2)])
            }
            // The statement still works with the right number afterwards.
            let rows = try await tx.rows("SELECT ?1 AS a, ?2 AS b", [.integer(1), .integer(2)])
            #expect(rows.first?.values == [.integer(1), .integer(2)])
        }
    }
}
