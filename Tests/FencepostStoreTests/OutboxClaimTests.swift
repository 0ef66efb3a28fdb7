import FencepostCore
import FencepostGeometry
import FencepostServerTestSupport
import FencepostTestSupport
import Foundation
import Testing

@testable import FencepostStore

/// A push's claim over an outbox most of which is delivered: the rows claimed are the lowest
/// pending ones, a dead row retried among them (the queue's mark moved down to it); and on
/// PostgreSQL, at the size where it matters, they are read in order along the primary key
/// from the mark whether the table has statistics or not: not every pending row read and
/// sorted (with none, as just after a large ingest), nor the key walked past every delivered
/// row from the first.
@Suite struct OutboxClaimTests {
    let grid = WalkGrid(origin: Position(lon: -8.62, lat: 52.66))

    @Test func aClaimTakesTheLowestPendingRowsAfterMostWereDelivered() async throws {
        let store = try await TestStores.fresh()
        defer { TestStores.closeLater(store) }
        try await store.applyRegions((0..<300).map { grid.circle("r\($0)", x: Double($0) * 20, radius: 5) })
        // 250 rows pushed: row 70 rejected (dead), the others delivered.
        for _ in 0..<5 { try await store.claimAndAnswer(limit: 50, rejecting: 70) }
        // Row 70 goes back to pending, far below the others (a dead letter retried).
        #expect(try await store.pendingMark() == 201)
        await #expect(try store.retryDeadLetters() == 1)
        #expect(try await store.pendingMark() == 70)
        let claimed = try await store.claimPushBatch(limit: 1_000, maxBytes: .max).map(\.seq)
        #expect(claimed == [70] + Array(251...300).map(Int64.init))
        await #expect(try store.syncStatus().counts == [.pending: 0, .inflight: 51, .delivered: 249, .dead: 0])
    }

    @Test func onPostgreSQLAClaimReadsThePendingRowsInKeyOrderFromTheMarkWithOrWithoutStatistics() async throws {
        let store = try await TestStores.fresh()
        defer { TestStores.closeLater(store) }
        guard store.location.hasPrefix("postgres") else { return }
        // 200,000 rows, the first 150,000 delivered: a push three quarters done.
        try await store.write { tx in
            try await tx.execute(
                """
                INSERT INTO outbox (entity, entity_id, op, version, payload, created_at, status)
                SELECT 'region', 'r' || i, 'upsert', 1, '{}', '2026-01-01T00:00:00.000Z',
                    CASE WHEN i <= 150000 THEN 'delivered' ELSE 'pending' END
                FROM generate_series(1, 200000) AS i
                """)
        }
        for analyze in [false, true] {
            // Bound as a claim binds them, from the mark a claim moves to.
            let (claim, mark): ([String], [String]) = try await store.write { tx in
                if analyze { try await tx.execute("ANALYZE outbox") }
                return (
                    try await tx.values("EXPLAIN " + Store.claimSelect, [.integer(150_001), .integer(1000)]),
                    try await tx.values("EXPLAIN " + OutboxPendingMark.lowestUnsettled, [.integer(150_001)])
                )
            }
            for text in [claim, mark].map({ $0.joined(separator: "\n") }) {
                #expect(text.contains("Index Scan using outbox_pkey on outbox"), "\(text)")
                #expect(!text.contains("Sort"), "\(text)")
            }
        }
        let claimed = try await store.claimPushBatch(limit: 1_000, maxBytes: .max).map(\.seq)
        #expect(claimed == Array(150_001...151_000).map(Int64.init))
    }
}

extension Store {
    /// Claims up to `limit` rows and records a backend's answers: row `rejected` refused, the
    /// others applied.
    func claimAndAnswer(limit: Int, rejecting rejected: Int64) async throws {
        let batch = try await claimPushBatch(limit: limit, maxBytes: .max)
        try await acknowledge(
            batch,
            results: Dictionary(
                uniqueKeysWithValues: batch.map {
                    ($0.mutation.key, $0.seq == rejected ? SyncResult.rejected(reason: "no") : .applied)
                }))
    }

    /// The push queue's mark as stored (nil until a claim moves it).
    func pendingMark() async throws -> Int64? {
        try await read { tx in
            try await tx.value("SELECT value FROM store_meta WHERE key = ?", OutboxPendingMark.key)
        }
    }
}
