import Foundation
import GRDB
import Testing

@testable import FencepostStore

@Suite struct WriteAheadLogTests {
    /// Writes about `pages` pages of 4 KiB to the store, in transactions of 100 rows.
    static func fill(_ store: Store, pages: Int) async throws {
        try await store.write { tx in try await tx.execute("CREATE TABLE IF NOT EXISTS filler (bytes BLOB)") }
        for _ in 0..<(pages / 100) {
            try await store.write { tx in
                for _ in 0..<100 { try await tx.execute("INSERT INTO filler VALUES (randomblob(4000))") }
            }
        }
    }

    /// How many frames the log holds and how many are already in the database, as a passive
    /// checkpoint on a connection of the test's own reports them.
    static func frames(_ path: String) throws -> (frames: Int, checkpointed: Int) {
        let result = try DatabaseQueue(path: path).writeWithoutTransaction { db in try db.checkpoint(.passive) }
        return (result.walFrameCount, result.checkpointedFrameCount)
    }

    @Test func whileCheckpointingTheWriterLeavesCheckpointsToTheLog() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fencepost-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("store.db").path
        let store = try Store(path: path)
        let log = try #require(try WriteAheadLog.of(store))
        try log.startCheckpointing()

        // Past SQLite's 1,000-page threshold the writer would have checkpointed and restarted
        // the log; started, it leaves every frame for the checkpointer, which copies them all.
        try await Self.fill(store, pages: 3_000)
        let first = try log.checkpoint()
        #expect(first.logFrames > 3_000)
        #expect(first.checkpointedFrames == first.logFrames)
        #expect(try await store.read { tx in try await tx.value("SELECT count(*) FROM filler") as Int? } == 3_000)
        try log.sync()

        // Stopped, the writer checkpoints at commit again: the log restarts instead of growing.
        try log.stopCheckpointing()
        try await Self.fill(store, pages: 3_000)
        #expect(try Self.frames(path).frames < 2_000)
    }

    /// Between the writer's transactions, a small log is left alone (by the frames the last
    /// checkpoint counted); past `restartFrames` it is checkpointed from the writer's
    /// connection, so the next transaction starts it over.
    @Test func afterCommitStartsOnlyAnOvergrownLogOver() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fencepost-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("store.db").path
        let store = try Store(path: path)
        let log = try #require(try WriteAheadLog.of(store))
        let durability = StoreDurability(log: log, syncsCommits: true)
        try log.startCheckpointing()

        try await Self.fill(store, pages: 1_000)
        try log.checkpoint()
        #expect(!log.isLarge)
        #expect(await durability.afterCommit() == false)

        try await Self.fill(store, pages: WriteAheadLog.restartFrames + 1_000)
        try log.checkpoint()
        #expect(log.isLarge)
        #expect(await durability.afterCommit() == true)
        #expect(!log.isLarge)
        // The log starts over at the next transaction: its frames are the new ones only.
        try await Self.fill(store, pages: 100)
        #expect(try Self.frames(path).frames < 1_000)
        try log.stopCheckpointing()
    }
}
