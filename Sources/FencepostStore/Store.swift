import FencepostCore
import Foundation
package import ServiceLifecycle

/// The event repository every Fencepost command and the service share: SQLite (a file, the
/// default) or PostgreSQL (a `postgres://` URL), behind one API.
///
/// The only target that touches a database. Its SQL is written once (``SQLTransaction``); the
/// few differences between the two live in each backend's ``SQLDialect``, and each backend keeps
/// its own fast path for an ingest's writes. Writes that belong together happen in one
/// transaction, so a crash at any point leaves either all of them or none.
package struct Store: Sendable {
    let backend: any StoreBackend

    /// A file path, or the URL without its password.
    package var location: String { backend.location }

    /// The SQLite backend, for what only a SQLite file has (its write-ahead log).
    var sqlite: SQLiteBackend? { backend as? SQLiteBackend }

    /// Opens the store `location` names (``StoreLocation``): a SQLite file, created when
    /// missing, or a PostgreSQL database; migrates it. A location the store cannot use, a
    /// server that cannot be reached or refuses the login, or a schema newer than this release
    /// throws a ``StoreOpenError`` saying so; a full disk, or a SQLite file whose write lock
    /// another process holds for longer than `busyTimeout` seconds, a ``StoreUnavailable``.
    ///
    /// With `createIfMissing` false, a SQLite file that does not exist is not made: the error
    /// is ``StoreOpenError/missing(path:)`` (for commands that only read, where a mistyped path
    /// should not leave an empty store behind). A PostgreSQL database is never created here.
    ///
    /// A PostgreSQL store's connection pool runs until ``close()``; with `poolAsService`, it is
    /// left to the caller's service group instead (``poolService``), which must run it for any
    /// transaction to start.
    package static func open(
        _ location: String, busyTimeout: Double = 30, createIfMissing: Bool = true, poolAsService: Bool = false
    ) async throws -> Store {
        switch try StoreLocation(location) {
        case .file(let path):
            if !createIfMissing, !FileManager.default.fileExists(atPath: path) {
                throw StoreOpenError.missing(path: path)
            }
            return try Store(path: path, busyTimeout: busyTimeout)
        case .postgres(let url):
            return Store(backend: try await PostgresBackend.open(url, runsPool: !poolAsService))
        }
    }

    /// Opens (creating when missing) the SQLite database at `path` and migrates it; writes wait
    /// up to `busyTimeout` seconds for another process's write lock.
    package init(path: String, busyTimeout: Double = 30) throws {
        self.init(backend: try SQLiteBackend(path: path, busyTimeout: busyTimeout))
    }

    /// Where the store is when nothing names one: `$FENCEPOST_DB`, else
    /// `$XDG_DATA_HOME/fencepost/fencepost.db`, else `~/.local/share/fencepost/fencepost.db`.
    package static func defaultLocation(environment: [String: String]) -> String {
        StoreLocation.defaultPath(environment: environment)
    }

    /// A private SQLite database in memory, for tests and dry runs.
    package static func inMemory() throws -> Store {
        Store(backend: try SQLiteBackend())
    }

    init(backend: any StoreBackend) {
        self.backend = backend
    }

    /// The service that runs a PostgreSQL store's connection pool when it was opened with
    /// `poolAsService`; nil for SQLite.
    package var poolService: (any Service)? {
        (backend as? PostgresBackend)?.pool
    }

    /// Closes the store's connections.
    package func close() async {
        await backend.close()
    }

    /// Runs `body` in a read transaction (one snapshot), off the caller's thread.
    package func read<T>(_ body: (any SQLTransaction) async throws -> T) async throws -> T {
        try await backend.read(body)
    }

    /// Runs `body` in a write transaction, off the caller's thread: committed when it returns,
    /// rolled back when it throws.
    @discardableResult
    package func write<T>(_ body: (any SQLTransaction) async throws -> T) async throws -> T {
        try await backend.write(body)
    }
}
