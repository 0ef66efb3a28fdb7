import Foundation
import GRDB
import Synchronization
import Testing

@testable import FencepostStore

/// The outbox rebuilt by migrations v7 (cheaper checks) and v8 (rows that refer to their entity)
/// keeps every row with its payload and key, the seq high-water mark, the checks themselves and
/// the keys' uniqueness.
@Suite struct OutboxMigrationTests {
    static let insertRow = """
        INSERT INTO outbox (entity, entity_id, op, version, idempotency_key, payload, status, attempts, last_error, created_at)
        VALUES (?, ?, 'upsert', 1, ?, ?, ?, ?, ?, '2026-11-23T10:00:00.000Z')
        """

    @Test func rebuildKeepsRowsTheHighWaterMarkAndTheChecks() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fencepost-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent("store.db").path

        // A store as the release before v7 left it: four rows, the newest since cleaned up.
        let older = try DatabaseQueue(path: path)
        try SQLiteBackend.migrator.migrate(older, upTo: "v6-sync")
        let before: [Row] = try older.write { db in
            for (n, status) in ["delivered", "pending", "dead", "pending"].enumerated() {
                try db.execute(
                    sql: Self.insertRow,
                    arguments: [
                        "event", "e\(n)", "event:e\(n):v1", #"{"id":"e\#(n)"}"#, status, n, n == 2 ? "HTTP 410" : nil,
                    ])
            }
            try db.execute(sql: "DELETE FROM outbox WHERE seq = 4")
            return try Row.fetchAll(db, sql: "SELECT * FROM outbox ORDER BY seq")
        }
        try older.close()

        let backend = try SQLiteBackend(path: path)
        try backend.writer.write { db in
            #expect(try Row.fetchAll(db, sql: "SELECT * FROM outbox ORDER BY seq") == before)
            // seq 4 was used once: the next row gets 5, as before the rebuild.
            try db.execute(sql: Self.insertRow, arguments: ["visit", "v", "visit:v:v1", "{}", "pending", 0, nil])
            #expect(db.lastInsertedRowID == 5)
            #expect(throws: DatabaseError.self) {
                try db.execute(sql: Self.insertRow, arguments: ["event", "x", "event:x:v1", "{}", "lost", 0, nil])
            }
            #expect(throws: DatabaseError.self) {
                try db.execute(sql: Self.insertRow, arguments: ["event", "e1", "event:e1:v1", "{}", "pending", 0, nil])
            }
            let indexes = try String.fetchAll(
                db,
                sql:
                    "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'outbox' AND sql IS NOT NULL ORDER BY name"
            )
            #expect(indexes == ["outbox_by_entity", "outbox_by_key", "outbox_by_status", "outbox_references"])
            // A row may now leave its key and payload out: they are derived when read.
            try db.execute(sql: Self.insertRow, arguments: ["event", "r", nil, nil, "pending", 0, nil])
            try db.execute(sql: Self.insertRow, arguments: ["event", "s", nil, nil, "pending", 0, nil])
        }
    }
}

/// Processes that open a new store at once (`watch` starting while a script polls `events
/// export`) each run the migrations: every one of them opens it.
@Suite struct ConcurrentMigrationTests {
    @Test func storesOpenedAtOnceOnANewFileAllOpen() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fencepost-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        for round in 0..<10 {
            let path = directory.appendingPathComponent("store\(round).db").path
            let failures = Mutex<[String]>([])
            let opened = DispatchGroup()
            for _ in 0..<6 {
                opened.enter()
                Thread {
                    do {
                        _ = try Store(path: path)
                    } catch {
                        failures.withLock { $0.append("\(error)") }
                    }
                    opened.leave()
                }.start()
            }
            opened.wait()
            #expect(failures.withLock { $0 }.isEmpty, "round \(round)")
        }
    }
}
