import Dispatch
import FencepostCore

/// A database the store runs on: SQLite (a file, or memory for tests) or PostgreSQL. Each runs
/// the store's SQL (written once, against ``SQLTransaction``) in its own transactions: SQLite
/// on the connection's own thread (the caller's task waits without holding a thread),
/// PostgreSQL in the caller's task, each statement awaited.
protocol StoreBackend: Sendable {
    /// Runs `body` in a transaction that reads one snapshot and writes nothing.
    func read<T>(_ body: (any SQLTransaction) async throws -> T) async throws -> T

    /// Runs `body` in a write transaction: committed when it returns, rolled back when it throws.
    func write<T>(_ body: (any SQLTransaction) async throws -> T) async throws -> T

    /// Runs `body` holding the store-wide lock `name` (see ``Store/exclusively(_:wait:_:)``).
    func exclusively<T: Sendable>(_ name: String, wait: Bool, _ body: @escaping @Sendable () async throws -> T)
        async throws -> T?

    /// Calls `onChange` whenever another process commits outbox rows (and once at the start),
    /// until the task is cancelled; false where the backend cannot tell (SQLite: other
    /// processes' writes are found by polling).
    func watchChanges(_ onChange: @escaping @Sendable () -> Void) async throws -> Bool

    /// What the store is, for messages: a file path, or a URL without its password.
    var location: String { get }

    /// Closes the connections; the backend is not used after.
    func close() async
}
