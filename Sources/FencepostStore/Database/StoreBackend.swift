import Dispatch
import FencepostCore

/// A database the store runs on: SQLite (a file, or memory for tests) or PostgreSQL. Each runs
/// the store's SQL (written once, against ``SQLTransaction``) in its own transactions, on a
/// thread of its own, while the caller's task waits without holding a thread.
protocol StoreBackend: Sendable {
    /// Runs `body` in a transaction that reads one snapshot and writes nothing.
    func read<T>(_ body: (any SQLTransaction) throws -> T) async throws -> T

    /// Runs `body` in a write transaction: committed when it returns, rolled back when it throws.
    func write<T>(_ body: (any SQLTransaction) throws -> T) async throws -> T

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

/// Runs blocking work on threads of their own (not the cooperative pool, which has as many
/// threads as cores: two here) while the calling task waits for it.
enum BlockingWork {
    /// Runs `body` on a store thread, in the calling task (which prefers the store's executor
    /// for the call): `body` and what it captures never leave the task, so they need not be
    /// Sendable.
    static func run<T>(_ body: () throws -> T) async throws -> T {
        try await withTaskExecutorPreference(StoreThreads.shared) { try body() }
    }
}

/// A task executor on threads of the store's own (a concurrent dispatch queue): a task that
/// prefers it runs its synchronous database work there, blocking none of the cooperative pool's
/// threads.
final class StoreThreads: TaskExecutor {
    static let shared = StoreThreads()
    private let queue = DispatchQueue(label: "fencepost.store", qos: .userInitiated, attributes: .concurrent)

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }
}
