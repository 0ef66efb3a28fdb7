import Foundation
import GRDB
import Synchronization

/// The store's write-ahead log, for a long-running writer (the service) that wants its
/// commits neither to stop for checkpoints nor to wait, one by one, for the disk.
///
/// - Checkpoints: by default SQLite checkpoints in the committing thread whenever the log
///   passes 1,000 pages, so every few commits one of them also copies those pages into the
///   database file and waits for its `fdatasync` — under live ingest, a fifth of the writer's
///   time. Between ``startCheckpointing()`` and ``stopCheckpointing()`` the writer only
///   appends, and ``checkpoint()``, called periodically from another thread, copies the log back
///   through a connection of its own. A passive checkpoint neither waits for nor blocks the
///   writer or readers.
/// - Starting over: the log is written from its start again only when a write transaction
///   begins after a checkpoint copied every frame into the database. Checkpoints beside a writer
///   that commits continuously never quite catch up, so the log grew without end (4.4 GB in a
///   minute of live ingest, slowing every sync and checkpoint). Once the log holds more than
///   `restartFrames`, ``restartIfLarge()``, called by the writer between its transactions,
///   copies what the background checkpoints have not yet copied (a moment's worth), so its next
///   transaction starts the log over.
/// - Durability: commits are made with SQLite's `synchronous = NORMAL` (GRDB's default in WAL
///   mode): they survive the process crashing but not the machine until the log reaches the
///   disk. ``sync()`` puts everything committed so far there with one `fdatasync` of the log,
///   so a writer can answer a group of commits after one sync while it already works on the
///   next group (group commit), instead of syncing inside each commit (`synchronous = FULL`).
final class WriteAheadLog: Sendable {
    private let backend: SQLiteBackend
    private let checkpointConnection: DatabaseQueue
    private let descriptor: Int32
    /// Frames in the log at the last checkpoint, background or the writer's.
    private let frames = Atomic<Int>(0)
    /// The log is started over once it holds this many frames (4 KiB pages: 64 MiB).
    static let restartFrames = 16_384

    /// The log of `store`; nil when the store has none (it is in memory, or on PostgreSQL,
    /// which looks after its own log).
    static func of(_ store: Store) throws -> WriteAheadLog? {
        guard let backend = store.sqlite, !backend.isInMemory else { return nil }
        return try WriteAheadLog(backend)
    }

    private init(_ backend: SQLiteBackend) throws {
        var configuration = Configuration()
        configuration.label = "fencepost.checkpoint"
        checkpointConnection = try DatabaseQueue(path: backend.location, configuration: configuration)
        // The pool keeps the log file in place while it is open (GRDB creates it on opening).
        descriptor = open(backend.location + "-wal", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw WriteAheadLogError(operation: "open \(backend.location)-wal", code: errno) }
        self.backend = backend
    }

    deinit {
        close(descriptor)
    }

    /// Puts every commit made so far on disk.
    func sync() throws {
        guard fdatasync(descriptor) == 0 else {
            throw WriteAheadLogError(operation: "fdatasync \(backend.location)-wal", code: errno)
        }
    }

    /// Takes checkpoints over from the writer.
    func startCheckpointing() throws {
        try setWriterCheckpoints(pages: 0)
    }

    /// Copies as much of the log into the database as no reader still needs; returns the
    /// frames (pages) in the log and how many of them are now in the database.
    @discardableResult
    func checkpoint() throws -> (logFrames: Int, checkpointedFrames: Int) {
        let result = try checkpointConnection.writeWithoutTransaction { db in try db.checkpoint(.passive) }
        frames.store(result.walFrameCount, ordering: .relaxed)
        return (result.walFrameCount, result.checkpointedFrameCount)
    }

    /// Whether the log held more than `restartFrames` at the last checkpoint: whether
    /// ``restartIfLarge()`` has something to do.
    var isLarge: Bool { frames.load(ordering: .relaxed) > Self.restartFrames }

    /// For the store's one writer, between its transactions: when the log has grown past
    /// `restartFrames`, checkpoints from the writer's own connection, so that (unless a reader
    /// still reads the log) its next transaction starts the log over. Returns whether it did.
    @discardableResult
    func restartIfLarge() throws -> Bool {
        guard isLarge else { return false }
        let result = try backend.writer.writeWithoutTransaction { db in try db.checkpoint(.passive) }
        // Every frame copied: the next transaction starts over; otherwise try again next time.
        frames.store(
            result.checkpointedFrameCount == result.walFrameCount ? 0 : result.walFrameCount, ordering: .relaxed)
        return true
    }

    /// Gives checkpoints back to the writer (SQLite's default of 1,000 pages).
    func stopCheckpointing() throws {
        try setWriterCheckpoints(pages: 1_000)
    }

    private func setWriterCheckpoints(pages: Int) throws {
        try backend.writer.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_autocheckpoint = \(pages)") }
    }
}

/// A system call on the log file failed.
struct WriteAheadLogError: Error, CustomStringConvertible {
    var operation: String
    var code: Int32
    var description: String { "\(operation): \(String(cString: strerror(code)))" }
}
