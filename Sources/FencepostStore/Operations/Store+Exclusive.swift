import FencepostCore
package import Foundation

extension Store {
    /// Runs `body` while this process alone holds the store-wide lock `name` (one sync at a
    /// time per store, whichever process or machine runs it): waits for it when `wait`, else
    /// returns nil without running `body` when another holds it. The lock goes with its holder:
    /// a process that dies releases it.
    package func exclusively<T: Sendable>(_ name: String, wait: Bool, _ body: @escaping @Sendable () async throws -> T)
        async throws -> T?
    {
        try await backend.exclusively(name, wait: wait, body)
    }
}

extension Store {
    /// Calls `onChange` whenever any process or instance commits new outbox rows (events,
    /// visits, regions), until the task is cancelled, riding out the database's restarts.
    /// Returns false at once where the store cannot tell (SQLite: poll instead).
    package func watchChanges(_ onChange: @escaping @Sendable () -> Void) async throws -> Bool {
        try await backend.watchChanges(onChange)
    }
}

extension Store {
    /// Whether the periodic job `name` is due (its last run, by any process, is `every` or
    /// more ago) and, if so, records this run: of several instances running the same job, one
    /// runs it each period.
    package func claimPeriodicRun(_ name: String, every interval: Duration, now: Date = Date()) async throws -> Bool {
        let key = "last_run:" + name
        let nowMilliseconds = Timestamp.milliseconds(now.timeIntervalSince1970)
        let intervalMilliseconds =
            interval.components.seconds * 1_000 + interval.components.attoseconds / 1_000_000_000_000_000
        return try await write { tx in
            try await tx.dialect.lock(key, in: tx)
            if let last: Int64 = try await tx.value("SELECT value FROM store_meta WHERE key = ?", key),
                nowMilliseconds - last < intervalMilliseconds
            {
                return false
            }
            try await tx.execute(
                "INSERT INTO store_meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                key, nowMilliseconds)
            return true
        }
    }
}
