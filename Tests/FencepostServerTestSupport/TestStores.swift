package import FencepostStore
import Foundation
import Logging
import PostgresNIO

/// The store a test writes to: a private SQLite database in memory, or, when
/// `FENCEPOST_TEST_POSTGRES` holds the URL of a PostgreSQL database (as `tools/test` sets it for
/// its second run), a fresh database of its own on that server, so that the same tests check
/// both backends.
package enum TestStores {
    /// The server's URL when the tests run against PostgreSQL.
    package static let postgresURL = ProcessInfo.processInfo.environment["FENCEPOST_TEST_POSTGRES"].flatMap {
        $0.isEmpty ? nil : $0
    }

    /// Whether this run is against PostgreSQL: tests of what only SQLite has (its files, its
    /// write-ahead log, its migrations from older releases) skip themselves then.
    package static var onPostgres: Bool { postgresURL != nil }

    /// A new, empty, migrated store.
    package static func fresh() async throws -> Store {
        guard let postgresURL else { return try Store.inMemory() }
        return try await Store.open(try await createDatabase(on: postgresURL))
    }

    /// Closes `store` once a test is done with it (from a `defer`): a PostgreSQL store's
    /// connections go back to the server, which tests open many of.
    package static func closeLater(_ store: Store) {
        Task { await store.close() }
    }

    /// Creates an empty database on the server `url` names; returns the URL naming it.
    package static func createDatabase(on url: String, options: String = "") async throws -> String {
        guard var components = URLComponents(string: url), let host = components.host, let port = components.port else {
            throw TestStoreError(
                reason: "FENCEPOST_TEST_POSTGRES is not a postgres://user@host:port/database URL: \(url)")
        }
        let name = "fencepost_test_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        let configuration = PostgresConnection.Configuration(
            host: host, port: port, username: components.user ?? "postgres", password: components.password,
            database: String(components.path.dropFirst()), tls: .disable)
        let logger = Logger(label: "fencepost.test", factory: { _ in SwiftLogNoOpLogHandler() })
        // Tests create databases at once; the server may refuse one now and then (the template
        // busy, connections exhausted for a moment): tried again, then said in full.
        for attempt in 1... {
            do {
                let connection = try await PostgresConnection.connect(
                    configuration: configuration, id: 1, logger: logger)
                do {
                    try await connection.query(
                        PostgresQuery(unsafeSQL: "CREATE DATABASE \(name) \(options)"), logger: logger)
                } catch {
                    try? await connection.close()
                    throw error
                }
                try await connection.close()
                break
            } catch {
                guard attempt < 5 else {
                    throw TestStoreError(reason: "CREATE DATABASE failed: \(String(reflecting: error))")
                }
                try await Task.sleep(for: .milliseconds(200 * attempt))
            }
        }
        components.path = "/" + name
        // Tests open many stores at once on a loaded machine, where the server may take more than
        // the default 3 s to hand a new connection: a test waits, rather than reads unavailable.
        components.queryItems = (components.queryItems ?? []) + [URLQueryItem(name: "connect_timeout", value: "60")]
        return components.string!
    }
}

package struct TestStoreError: Error, CustomStringConvertible {
    package var reason: String
    package var description: String { reason }
}

// MARK: - Injected failures

extension TestStores {
    /// Makes the database itself refuse, from now on, every insert into `table` for which
    /// `condition` (SQL both backends read, over `NEW`) holds: a real failure part-way through a
    /// store's transaction. Undone by ``allowInserts(in:into:)``.
    package static func refuseInserts(in store: Store, into table: String, when condition: String) async throws {
        let name = "refuse_" + table
        try await store.write { tx in
            if store.location.hasPrefix("postgres") {
                try await tx.execute(
                    """
                    CREATE FUNCTION \(name)() RETURNS trigger LANGUAGE plpgsql AS $$
                    BEGIN IF \(condition) THEN RAISE EXCEPTION 'injected failure'; END IF; RETURN NEW; END $$
                    """)
                try await tx.execute(
                    "CREATE TRIGGER \(name) AFTER INSERT ON \(table) FOR EACH ROW EXECUTE FUNCTION \(name)()")
            } else {
                try await tx.execute(
                    "CREATE TRIGGER \(name) AFTER INSERT ON \(table) WHEN \(condition) BEGIN SELECT RAISE(ABORT, 'injected failure'); END"
                )
            }
        }
    }

    package static func allowInserts(in store: Store, into table: String) async throws {
        let name = "refuse_" + table
        try await store.write { tx in
            try await tx.execute(
                store.location.hasPrefix("postgres") ? "DROP TRIGGER \(name) ON \(table)" : "DROP TRIGGER \(name)")
        }
    }
}
