import FencepostCore
import Foundation
import Logging
import NIOCore
import PostgresNIO
import ServiceLifecycle

/// The store in a PostgreSQL database, shared by any number of processes and service
/// instances: postgres-nio's `PostgresClient` pool, migrated once under an advisory lock.
///
/// The store's SQL runs on one leased connection per transaction, in the caller's task, each
/// statement's answer awaited (no thread waits for the server); readers see one snapshot
/// (repeatable read), writers read committed and take the advisory locks the store asks for
/// (a region apply, a device's fixes).
final class PostgresBackend: StoreBackend {
    let client: PostgresClient
    let url: PostgresURL
    /// The pool's run, when the backend runs it itself (nil: a service group runs it).
    private let running: Task<Void, Never>?
    /// postgres-nio's own logging stays quiet: what fails reaches the caller as an error.
    static let logger = Logger(label: "fencepost.postgres", factory: { _ in SwiftLogNoOpLogHandler() })

    var location: String { url.description }

    private init(client: PostgresClient, url: PostgresURL, runsPool: Bool) {
        self.client = client
        self.url = url
        running = runsPool ? Task { await client.run() } : nil
    }

    /// Connects (within the URL's `connect_timeout`, else 10 s) and migrates, on a connection of its own; a server that
    /// cannot be reached, refuses the login or holds a newer schema throws a ``StoreOpenError``
    /// with one line to show. With `runsPool`, the backend runs its connection pool until
    /// ``close()``; without, the caller runs ``pool`` (a service of its service group), and no
    /// transaction starts before it does.
    static func open(_ url: PostgresURL, runsPool: Bool = true) async throws -> PostgresBackend {
        let timeout = url.connectTimeout ?? .seconds(10)
        var configuration: PostgresClient.Configuration
        if let socket = url.socket {
            configuration = .init(
                unixSocketPath: socket, username: url.user, password: url.password, database: url.database)
        } else {
            configuration = .init(
                host: url.host ?? "localhost", port: url.port, username: url.user, password: url.password,
                database: url.database,
                tls: url.requireTLS ? .require(.makeClientConfiguration()) : .disable)
        }
        configuration.options.connectTimeout = timeout
        configuration.options.maximumConnections = 16
        let backend = PostgresBackend(
            client: PostgresClient(configuration: configuration, backgroundLogger: logger), url: url,
            runsPool: runsPool)
        do {
            try await backend.migrate(timeout: timeout)
        } catch {
            await backend.close()
            throw error
        }
        return backend
    }

    /// The connection pool, for a service group to run (see ``open(_:runsPool:)``).
    var pool: any Service { client }

    func close() async {
        running?.cancel()
        _ = await running?.value
    }

    // MARK: - Transactions

    func read<T>(_ body: (any SQLTransaction) async throws -> T) async throws -> T {
        try await transaction(begin: "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", body)
    }

    func write<T>(_ body: (any SQLTransaction) async throws -> T) async throws -> T {
        try await transaction(begin: "BEGIN", body)
    }

    /// How long a transaction waits for a connection before the store is reported
    /// unavailable (503 in the service): the pool has none while the server is away.
    /// `?connect_timeout=` in the URL sets it.
    var leaseDeadline: Duration { url.connectTimeout ?? .seconds(3) }

    private func transaction<T>(begin: String, _ body: (any SQLTransaction) async throws -> T) async throws -> T {
        do {
            return try await client.withConnection(leasedWithin: leaseDeadline) { connection in
                let transaction = PostgresTransaction(connection)
                try await transaction.execute(begin, [])
                do {
                    let result = try await body(transaction)
                    try await transaction.flushOutbox()
                    try await transaction.execute("COMMIT", [])
                    return result
                } catch {
                    _ = try? await transaction.execute("ROLLBACK", [])
                    throw error
                }
            }
        } catch let error as PSQLError where Self.isConnectionFailure(error) {
            throw StoreUnavailable(reason: "PostgreSQL at \(location) is unavailable: \(Self.describe(error))")
        } catch let error as PostgresStatementError where error.meansUnavailable {
            throw StoreUnavailable(reason: "PostgreSQL at \(location) is unavailable: \(error.message)")
        } catch let error as PSQLError {
            // postgres-nio's own description says nothing; its kind and cause do.
            throw PostgresStatementError(
                message: Self.describe(error), sqlState: error.serverInfo?[.sqlState] ?? "", underlying: error)
        }
    }

    /// A session advisory lock on a connection of its own, watched while `body` runs: if that
    /// connection is lost (the server restarted, the network failed), the lock is gone and
    /// another instance may take it, so `body` is cancelled at once (at most ``lockCheck``
    /// later) rather than go on as if it still held it. A process that dies releases the lock
    /// with its connection.
    func exclusively<T: Sendable>(_ name: String, wait: Bool, _ body: @escaping @Sendable () async throws -> T)
        async throws -> T?
    {
        let key = PostgresBindings.key(name)
        return try await client.withConnection { connection in
            let lock = PostgresQuery(
                unsafeSQL: wait ? "SELECT pg_advisory_lock(\(key))" : "SELECT pg_try_advisory_lock(\(key))")
            let taken =
                try await connection.query(lock, logger: Self.logger).collect().first?.decode(Bool?.self) ?? true
            guard wait || taken else { return nil }
            let result: Result<T, any Error>
            do {
                result = .success(try await Self.whileHeld(on: connection, body))
            } catch {
                result = .failure(error)
            }
            // Released before the connection goes back to the pool (a lost connection took it).
            _ = try? await connection.query(
                PostgresQuery(unsafeSQL: "SELECT pg_advisory_unlock(\(key))"), logger: Self.logger)
            return try result.get()
        }
    }

    private static let lockCheck: Duration = .seconds(1)

    /// Runs `body` while checking, every ``lockCheck``, that `connection` (holding a lock) is
    /// still there; cancels `body` and throws ``StoreUnavailable`` when it is not.
    private static func whileHeld<T: Sendable>(
        on connection: PostgresConnection, _ body: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await body() }
            group.addTask {
                while true {
                    try await Task.sleep(for: lockCheck)
                    do {
                        _ = try await connection.query("SELECT 1", logger: logger).collect()
                    } catch {
                        throw StoreUnavailable(reason: "the connection holding a store lock was lost")
                    }
                }
            }
            defer { group.cancelAll() }
            while let result = try await group.next() {
                if let result { return result }
            }
            throw CancellationError()
        }
    }

    // MARK: - Changes

    static let changesChannel = "fencepost_changes"

    /// `LISTEN` on a connection of its own; after a lost connection, listens again once the
    /// server is back (and reports a change then: what was committed meanwhile was not heard).
    func watchChanges(_ onChange: @escaping @Sendable () -> Void) async throws -> Bool {
        while !Task.isCancelled {
            do {
                try await client.withConnection { connection in
                    try await connection.listen(on: Self.changesChannel) { notifications in
                        onChange()
                        for try await _ in notifications { onChange() }
                    }
                }
            } catch is CancellationError {
                break
            } catch {
                try? await Task.sleep(for: .seconds(1))
            }
        }
        return true
    }

    // MARK: - Opening

    /// A connection of its own for opening, so that a bad address, a stopped server, a missing
    /// database or a refused login fails the opening at once with the server's reason (the pool
    /// would retry forever), and so that migrating needs no pool.
    private func firstConnection(timeout: Duration) async throws -> PostgresConnection {
        var configuration: PostgresConnection.Configuration
        if let socket = url.socket {
            configuration = .init(
                unixSocketPath: socket, username: url.user, password: url.password, database: url.database)
        } else {
            configuration = .init(
                host: url.host ?? "localhost", port: url.port, username: url.user, password: url.password,
                database: url.database,
                tls: url.requireTLS ? .require(try .init(configuration: .makeClientConfiguration())) : .disable)
        }
        configuration.options.connectTimeout = .nanoseconds(Int64(timeout.components.seconds) * 1_000_000_000)
        do {
            return try await PostgresConnection.connect(configuration: configuration, id: 0, logger: Self.logger)
        } catch let error as PSQLError {
            throw StoreOpenError.unreachable("cannot open PostgreSQL at \(location): \(Self.describe(error))")
        } catch {
            throw StoreOpenError.unreachable("cannot open PostgreSQL at \(location): \(error)")
        }
    }

    /// The named migrations (``PostgresMigrations``) not applied yet, in order, each in its
    /// transaction, under an advisory lock: instances starting together migrate once.
    private func migrate(timeout: Duration) async throws {
        let connection = try await firstConnection(timeout: timeout)
        let transaction = PostgresTransaction(connection)
        // The session's lock goes with the connection, closed either way.
        do {
            try await transaction.execute("SELECT pg_advisory_lock(\(PostgresBindings.key("migrations")))", [])
            try await Self.migrate(transaction)
        } catch {
            try? await connection.close()
            throw error
        }
        try? await connection.close()
    }

    private static func migrate(_ transaction: PostgresTransaction) async throws {
        try await transaction.execute(
            "CREATE TABLE IF NOT EXISTS fencepost_migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)", [])
        let applied = Set(try await transaction.values("SELECT name FROM fencepost_migrations") as [String])
        let known = PostgresMigrations.all.map(\.name)
        let unknown = applied.subtracting(known)
        if !unknown.isEmpty { throw StoreOpenError.newerSchema(unknown.sorted()) }
        for migration in PostgresMigrations.all where !applied.contains(migration.name) {
            try await transaction.execute("BEGIN", [])
            do {
                // One statement at a time: the extended protocol takes one per query.
                for statement in migration.sql.components(separatedBy: ";\n")
                where !statement.allSatisfy(\.isWhitespace) {
                    try await transaction.execute(statement, [])
                }
                try await transaction.execute(
                    "INSERT INTO fencepost_migrations (name, applied_at) VALUES (?, ?)", migration.name,
                    Timestamp.format(Date()))
                try await transaction.execute("COMMIT", [])
            } catch {
                _ = try? await transaction.execute("ROLLBACK", [])
                throw error
            }
        }
    }

    // MARK: - Errors

    private static func isConnectionFailure(_ error: PSQLError) -> Bool {
        switch error.code {
        case .connectionError, .serverClosedConnection, .clientClosedConnection, .uncleanShutdown, .poolClosed:
            return true
        default:
            return false
        }
    }

    /// The server's own message where it sent one (a refused login), else the failure's kind.
    static func describe(_ error: PSQLError) -> String {
        if let message = error.serverInfo?[.message] { return message }
        if let underlying = error.underlying { return "\(underlying)" }
        return "\(error.code)"
    }
}

/// The database went away (a restart, a lost connection): the operation may be tried again.
extension PostgresBindings {
    /// A store-wide advisory lock's key, as SQL: a 64-bit hash of its name.
    static func key(_ name: String) -> String {
        "hashtextextended('fencepost:\(name.replacingOccurrences(of: "'", with: "''"))', 0)"
    }
}
