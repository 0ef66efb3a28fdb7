import CSQLiteSetup
package import GRDB
package import FencepostCore
import Foundation

/// The event repository: one SQLite database (WAL) that every Fencepost command shares.
///
/// The only target that touches SQLite. Writes that belong together happen in one `write {}`
/// transaction, so a crash at any point leaves either all of them or none.
public struct Store: Sendable {
    package let writer: any DatabaseWriter
    /// Run inside the apply transaction for each region whose open visits must close.
    let retirementHooks: [RegionRetirementHook]

    /// The database file (`:memory:` for an in-memory store).
    public var path: String { writer.path }

    /// A private in-memory database (``inMemory()``): no file, no write-ahead log.
    public var isInMemory: Bool { !(writer is DatabasePool) }

    /// Opens (creating when missing) the database at `path` and migrates it.
    public init(path: String) throws {
        _ = Self.sqliteSetUp
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try self.init(writer: DatabasePool(path: path, configuration: Self.configuration()))
    }

    /// A private in-memory database, for tests and dry runs.
    public static func inMemory() throws -> Store {
        _ = Self.sqliteSetUp
        return try Store(writer: DatabaseQueue(configuration: configuration()))
    }

    /// Multi-thread mode, set once before the first connection opens (see `fencepost_sqlite_setup`):
    /// SQLite's per-call mutexes were a tenth of an ingest's event writes.
    private static let sqliteSetUp: Int32 = fencepost_sqlite_setup()

    package init(writer: any DatabaseWriter, retirementHooks: [RegionRetirementHook] = []) throws {
        self.writer = writer
        self.retirementHooks = retirementHooks
        try Self.migrate(writer)
    }

    /// Runs the migrations not applied yet. Two processes opening a new store at once (`watch`
    /// and an `events export`, say) race: the migrator reads what is applied before each
    /// migration's transaction, so the slower one finds its tables made by the other. A failed
    /// migration's transaction is rolled back; trying again reads what the other applied.
    private static func migrate(_ writer: any DatabaseWriter) throws {
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

    /// The same store with one more hook run when regions are retired.
    package func adding(retirementHook: @escaping RegionRetirementHook) throws -> Store {
        try Store(writer: writer, retirementHooks: retirementHooks + [retirementHook])
    }

    private static func configuration() -> Configuration {
        var configuration = Configuration()
        // Another fencepost process may hold the write lock for a moment: wait, don't fail.
        configuration.busyMode = .timeout(30)
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

/// Called inside the apply transaction for a region whose open visits must be closed.
package typealias RegionRetirementHook = @Sendable (Database, String, RegionRetirementReason) throws -> Void
