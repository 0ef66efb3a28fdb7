package import FencepostStore

extension Store {
    /// Runs `body` while this process alone syncs the store (one sync at a time per store,
    /// whichever process, instance or machine runs it): waits for the turn when `wait`, else
    /// returns nil without running `body` when another sync holds it.
    package func exclusivelySyncing<T: Sendable>(wait: Bool, _ body: @escaping @Sendable () async throws -> T)
        async throws -> T?
    {
        try await exclusively(Self.syncLockName, wait: wait, body)
    }

    /// The store-wide lock every sync (push or pull, CLI or service) takes.
    private static let syncLockName = "sync"
}
