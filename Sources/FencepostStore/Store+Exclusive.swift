extension Store {
    /// Runs `body` while this process alone holds the store-wide lock `name` (one sync at a
    /// time per store, whichever process or machine runs it): waits for it when `wait`, else
    /// returns nil without running `body` when another holds it. The lock goes with its holder:
    /// a process that dies releases it.
    public func exclusively<T>(_ name: String, wait: Bool, _ body: () async throws -> T) async throws -> T? {
        try await backend.exclusively(name, wait: wait, body)
    }
}

extension SQLiteBackend {
    /// A `flock` on `<store>.<name>-lock`; a store in memory is private to its process.
    func exclusively<T>(_ name: String, wait: Bool, _ body: () async throws -> T) async throws -> T? {
        guard !isInMemory else { return try await body() }
        let path = location + ".\(name)-lock"
        let lock = try await BlockingWork.run { try FileLock.acquire(path, wait: wait) }
        guard let lock else { return nil }
        defer { withExtendedLifetime(lock) {} }
        return try await body()
    }
}
