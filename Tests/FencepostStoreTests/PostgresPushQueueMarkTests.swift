import FencepostCore
import FencepostServerTestSupport
import Foundation
import Testing

@testable import FencepostStore

/// The push queue's mark (``OutboxPendingMark``) across two instances of one PostgreSQL store:
/// a dead letter retried in one while the other claims is never left below the mark. The
/// claim waits for the retry's lock, then reads the retried row as pending; without the lock
/// it would read the mark before the retry commits, move it past the retried row and write it
/// over the retry's, leaving the row pending where no claim looks.
@Suite(.enabled(if: TestStores.onPostgres, "needs FENCEPOST_TEST_POSTGRES (tools/test's second run)"))
struct PostgresPushQueueMarkTests {
    @Test func aDeadLetterRetriedWhileAnotherInstanceClaimsIsClaimedFirst() async throws {
        let url = try await TestStores.createDatabase(on: try #require(TestStores.postgresURL))
        let claiming = try await Store.open(url)
        defer { TestStores.closeLater(claiming) }
        try await claiming.write { tx in
            for index in 1...20 {
                try await tx.enqueue(
                    OutboxRow(
                        entity: .event, id: "event-\(index)", version: 1, payload: "{}",
                        createdAt: "2026-11-26T00:00:00.000Z"))
            }
        }
        // Rows 1–10 pushed, row 3 rejected; then rows 11–15 pushed: the mark is at 11.
        for limit in [10, 5] { try await claiming.claimAndAnswer(limit: limit, rejecting: 3) }
        #expect(try await claiming.pendingMark() == 11)

        // The other instance retries row 3 as a retry does, and holds its transaction open
        // until the claim waits on a lock in this test's database (or 5 s pass).
        let retrying = try await Store.open(url)
        defer { TestStores.closeLater(retrying) }
        let (lowered, signal) = AsyncStream.makeStream(of: Void.self)
        async let retried: Void = retrying.write { tx in
            try await tx.dialect.lock(OutboxPendingMark.lockKey, in: tx)
            try await tx.execute("UPDATE outbox SET status = 'pending' WHERE seq = 3 AND status = 'dead'")
            try await OutboxPendingMark.lower(to: 3, tx: tx)
            signal.yield()
            for _ in 0..<100 {
                let waiting: Int64 =
                    try await tx.value(
                        """
                        SELECT COUNT(*) FROM pg_locks
                        WHERE NOT granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
                        """) ?? 0
                if waiting > 0 { break }
                try await Task.sleep(for: .milliseconds(50))
            }
        }
        for await _ in lowered { break }
        let claimed = try await claiming.claimPushBatch(limit: 100, maxBytes: .max)
        try await retried
        #expect(claimed.map(\.seq) == [3, 16, 17, 18, 19, 20])
        #expect(try await claiming.pendingMark() == 3)
    }
}
