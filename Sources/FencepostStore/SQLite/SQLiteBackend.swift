import CSQLiteSetup
import Foundation
import GRDB

/// The store in a SQLite file (WAL), or in memory for tests: GRDB's pool of one writer and
/// several readers, migrated on opening.
final class SQLiteBackend: StoreBackend {
    let writer: any DatabaseWriter
    let location: String

    /// Multi-thread mode, set once before the first connection opens (see `fencepost_sqlite_setup`):
    /// SQLite's per-call mutexes were a tenth of an ingest's event writes.
    private static let sqliteSetUp: Int32 = fencepost_sqlite_setup()

    /// Opens (creating when missing) the database file at `path` and migrates it. A full disk
    /// or a write lock held past `busyTimeout` seconds throws ``StoreUnavailable``.
    init(path: String, busyTimeout: Double = 30) throws {
        _ = Self.sqliteSetUp
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        location = path
        writer = try SQLiteFailures.translating(path: path) {
            try SQLiteFailures.retryingBusy(for: busyTimeout) {
                let pool = try DatabasePool(path: path, configuration: Self.configuration(busyTimeout: busyTimeout))
                do {
                    try Self.migrate(pool)
                } catch {
                    try? pool.close()
                    throw error
                }
                return pool
            }
        }
    }

    /// A private database in memory.
    init() throws {
        _ = Self.sqliteSetUp
        writer = try DatabaseQueue(configuration: Self.configuration(busyTimeout: 30))
        location = ":memory:"
        try Self.migrate(writer)
    }

    var isInMemory: Bool { !(writer is DatabasePool) }

    /// Runs `body` in a read transaction on a store thread, which holds the connection until
    /// the body ends (``CallingThreadExecutor``).
    func read<T>(_ body: (any SQLTransaction) async throws -> T) async throws -> T {
        try await BlockingWork.run {
            try SQLiteFailures.translating(path: location) {
                try writer.read { db in try CallingThreadExecutor.run { try await body(GRDBTransaction(db)) } }
            }
        }
    }

    /// Runs `body` in a write transaction on a store thread, as ``read(_:)`` does: an
    /// immediate transaction takes the write lock up front, so another process's commit cannot
    /// invalidate its first reads (SQLITE_BUSY_SNAPSHOT).
    func write<T>(_ body: (any SQLTransaction) async throws -> T) async throws -> T {
        try await BlockingWork.run {
            try SQLiteFailures.translating(path: location) {
                try writer.writeWithoutTransaction { db in
                    var result: T?
                    try db.inTransaction(.immediate) {
                        result = try CallingThreadExecutor.run { try await body(GRDBTransaction(db)) }
                        return .commit
                    }
                    return result!
                }
            }
        }
    }

    func close() async {
        try? writer.close()
    }

    /// Runs the migrations not applied yet. Two processes opening a new store at once (`watch`
    /// and an `events export`, say) race: the migrator reads what is applied before each
    /// migration's transaction, so the slower one finds its tables made by the other. A failed
    /// migration's transaction is rolled back; trying again reads what the other applied.
    private static func migrate(_ writer: any DatabaseWriter) throws {
        // Migrations this release does not know: a newer release made the file; leave it alone.
        let unknown = try writer.read { db in try migrator.appliedIdentifiers(db).subtracting(migrator.migrations) }
        if !unknown.isEmpty { throw StoreOpenError.newerSchema(unknown.sorted()) }
        for attempt in 1... {
            do {
                return try migrator.migrate(writer)
            } catch {
                if try writer.read({ try migrator.hasCompletedMigrations($0) }) { return }
                guard attempt < 5 else { throw error }
                Thread.sleep(forTimeInterval: 0.05 * Double(attempt))
            }
        }
    }

    private static func configuration(busyTimeout: Double) -> Configuration {
        var configuration = Configuration()
        // Another fencepost process may hold the write lock for a moment: wait, don't fail.
        configuration.busyMode = .timeout(busyTimeout)
        configuration.label = "fencepost"
        configuration.prepareDatabase { db in
            // The writer's page cache: 16 MiB rather than SQLite's 2 MiB, so an ingest's inserts
            // at random places in the id indexes mostly find their pages cached and a large
            // transaction spills fewer pages to the log before it commits. Readers keep the default.
            if !db.configuration.readonly { try db.execute(sql: "PRAGMA cache_size = -16384") }
        }
        return configuration
    }
}
