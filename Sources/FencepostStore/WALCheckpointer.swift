import GRDB

/// Moves write-ahead-log checkpoints off the writer. By default SQLite checkpoints in the
/// committing thread whenever the log passes 1,000 pages, so every few commits one commit
/// also copies those pages into the database file and waits for its `fdatasync` — under live
/// ingest that wait was a fifth of the writer's time. Between ``start()`` and ``stop()`` the
/// writer only appends to the log, and ``checkpoint()`` (called periodically by the owner, from
/// another thread) copies the log back through a connection of its own. A passive checkpoint
/// neither waits for nor blocks the writer or readers, so nothing else changes.
public final class WALCheckpointer: Sendable {
    private let store: Store
    private let connection: DatabaseQueue

    /// A checkpointer for `store`, which must be a database file (not in memory).
    public init(store: Store) throws {
        precondition(!store.isInMemory, "an in-memory store has no write-ahead log")
        var configuration = Configuration()
        configuration.label = "fencepost.checkpoint"
        self.connection = try DatabaseQueue(path: store.path, configuration: configuration)
        self.store = store
    }

    /// Takes checkpoints over from the writer.
    public func start() throws {
        try setWriterCheckpoints(pages: 0)
    }

    /// Copies as much of the log into the database as no reader still needs; returns the
    /// frames (pages) in the log and how many of them are now in the database.
    @discardableResult
    public func checkpoint() throws -> (logFrames: Int, checkpointedFrames: Int) {
        let result = try connection.writeWithoutTransaction { db in try db.checkpoint(.passive) }
        return (result.walFrameCount, result.checkpointedFrameCount)
    }

    /// Gives checkpoints back to the writer (SQLite's default of 1,000 pages).
    public func stop() throws {
        try setWriterCheckpoints(pages: 1_000)
    }

    private func setWriterCheckpoints(pages: Int) throws {
        try store.writer.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_autocheckpoint = \(pages)") }
    }
}
