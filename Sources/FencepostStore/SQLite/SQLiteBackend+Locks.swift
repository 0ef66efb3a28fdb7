/// What a SQLite file has of the store-wide locks and change notices: a file lock beside the
/// store; no notices (other processes' writes are found by polling).
extension SQLiteBackend {
    func watchChanges(_ onChange: @escaping @Sendable () -> Void) async throws -> Bool { false }

    /// A `flock` on `<store>.<name>-lock`; a store in memory is private to its process.
    func exclusively<T: Sendable>(_ name: String, wait: Bool, _ body: @escaping @Sendable () async throws -> T)
        async throws -> T?
    {
        guard !isInMemory else { return try await body() }
        let path = location + ".\(Self.fileNamePart(name))-lock"
        let lock = try await BlockingWork.run { try FileLock.acquire(path, wait: wait) }
        guard let lock else { return nil }
        defer { withExtendedLifetime(lock) {} }
        return try await body()
    }

    /// `name` as part of a file name: letters, digits, `-` and `_` as they are; anything else
    /// (a webhook's URL) replaced, with a hash of the whole name so that names stay apart.
    static func fileNamePart(_ name: String) -> String {
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_")
        if name.allSatisfy(allowed.contains), name.count <= 64 { return name }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325  // FNV-1a
        for byte in name.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        let readable = String(name.prefix(32).map { allowed.contains($0) ? $0 : "_" })
        return readable + "-" + String(hash, radix: 16)
    }
}
