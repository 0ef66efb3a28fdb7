package import FencepostCore
package import Foundation

/// An outbox row on its way to the backend.
package struct OutboxItem: Sendable, Hashable {
    package var seq: Int64
    package var mutation: SyncMutation
    package var attempts: Int
}

/// A mutation the backend rejected, or that ran out of attempts.
package struct SyncDeadLetter: Sendable, Hashable {
    package var seq: Int64
    package var entity: String
    package var entityID: String
    package var key: String
    package var attempts: Int
    package var lastError: String
    package var createdAt: String
}

/// Where an outbox row is on its way to the backend, as its `status` column holds it.
package enum OutboxStatus: String, Sendable, Hashable, CaseIterable {
    // In the order a row moves through them.
    case pending, inflight, delivered, dead
}

/// The queue as `fencepost sync status` reports it.
package struct SyncStatus: Sendable, Hashable {
    package var counts: [OutboxStatus: Int]
    /// When the oldest pending mutation was queued.
    package var oldestPendingAt: String?
    package var lastSuccessAt: String?
    package var lastError: String?
    package var lastErrorAt: String?
}

/// The client side of sync: the outbox as a persistent push queue. A row is `pending` until
/// claimed (`inflight`), then `delivered` once the backend acknowledged it (applied or
/// duplicate) or `dead` when rejected or out of attempts. Only one sync runs per store (the
/// caller holds the sync lock), so rows still `inflight` when a push starts were left by one
/// that was killed: they go back to `pending` and are sent again (the backend answers
/// `duplicate` for any it had applied).
extension Store {
    /// Puts rows a killed push left in flight back to pending; returns how many.
    @discardableResult
    package func requeueInflight() async throws -> Int {
        try await write { tx in try await tx.execute("UPDATE outbox SET status = 'pending' WHERE status = 'inflight'") }
    }

    /// The lowest pending rows from the queue's mark (the first `?`, ``OutboxPendingMark``),
    /// in order, the second `?` of them: the primary key walked from the mark, which a claim
    /// has just moved to the lowest pending or in-flight row, so the walk meets few rows that
    /// are not pending. Pending is written as none of the other three (the same rows: the
    /// status check admits four), because PostgreSQL plans by its estimates and `status =
    /// 'pending'` misleads it: without statistics (a table just filled by an ingest) it takes
    /// an equality to match one row in 200 and reads the whole table to sort the few it
    /// expects; three inequalities it takes to match nearly every row, and walks the key.
    static let claimSelect =
        OutboxPayload.select
        + " WHERE o.seq >= ? AND o.status <> 'inflight' AND o.status <> 'delivered' AND o.status <> 'dead'"
        + " ORDER BY o.seq LIMIT ?"

    /// Claims the next pending rows in outbox order (up to `limit` rows and about `maxBytes`
    /// of payload, at least one row) and marks them in flight.
    package func claimPushBatch(limit: Int, maxBytes: Int) async throws -> [OutboxItem] {
        try await write { tx in
            try await tx.dialect.lock(OutboxPendingMark.lockKey, in: tx)
            let from = try await OutboxPendingMark.advance(tx)
            var items: [OutboxItem] = []
            var bytes = 0
            for row in try await tx.rows(Self.claimSelect, [from.sqlValue, limit.sqlValue]) {
                let change = OutboxPayload.change(row)
                bytes += change.mutation.payload.utf8.count + 200
                if !items.isEmpty && bytes > maxBytes { break }
                items.append(OutboxItem(seq: change.seq, mutation: change.mutation, attempts: row["attempts"]))
            }
            guard let first = items.first, let last = items.last else { return [] }
            try await tx.execute(
                "UPDATE outbox SET status = 'inflight' WHERE status = 'pending' AND seq BETWEEN ? AND ?", first.seq,
                last.seq)
            return items
        }
    }

    /// Records the backend's answers: applied and duplicate rows are delivered, rejected ones
    /// dead with the backend's reason; rows without an answer go back to pending.
    /// Returns (delivered, dead).
    @discardableResult
    package func acknowledge(
        _ items: [OutboxItem], results: [String: SyncResult], at now: Date = Date()
    ) async throws -> (delivered: Int, dead: Int) {
        let timestamp = Timestamp.format(now)
        return try await write { tx in
            // The usual answer, every row applied or a duplicate: one statement for the batch
            // (a claimed batch is every in-flight row between its first and last seq).
            if let first = items.first, let last = items.last,
                items.allSatisfy({ results[$0.mutation.key].isDelivered })
            {
                let delivered = try await tx.execute(
                    """
                    UPDATE outbox SET status = 'delivered', delivered_at = ?, attempts = attempts + 1, last_error = NULL,
                        next_attempt_at = NULL WHERE status = 'inflight' AND seq BETWEEN ? AND ?
                    """,
                    timestamp, first.seq, last.seq)
                try await Self.setSyncState("push.last_success_at", timestamp, tx: tx)
                return (delivered, 0)
            }
            var delivered = 0
            var dead = 0
            for item in items {
                switch results[item.mutation.key] {
                case .applied?, .duplicate?:
                    try await tx.execute(
                        """
                        UPDATE outbox SET status = 'delivered', delivered_at = ?, attempts = attempts + 1, last_error = NULL,
                            next_attempt_at = NULL WHERE seq = ?
                        """,
                        timestamp, item.seq)
                    delivered += 1
                case .rejected(let reason)?:
                    try await tx.execute(
                        "UPDATE outbox SET status = 'dead', attempts = attempts + 1, last_error = ?, next_attempt_at = NULL WHERE seq = ?",
                        "rejected: \(reason)", item.seq)
                    dead += 1
                case nil:
                    try await tx.execute("UPDATE outbox SET status = 'pending' WHERE seq = ?", item.seq)
                }
            }
            try await Self.setSyncState("push.last_success_at", timestamp, tx: tx)
            return (delivered, dead)
        }
    }

    /// Records a failed attempt at sending `items`: back to pending with the error and when
    /// the next attempt is due. When `counts` (the request may have reached the backend), the
    /// attempt counts, and rows that reach `maxAttempts` go dead. Returns how many went dead.
    @discardableResult
    package func recordPushFailure(
        _ items: [OutboxItem], error: String, counts: Bool, maxAttempts: Int, retryAt: Date, at now: Date = Date()
    ) async throws -> Int {
        let timestamp = Timestamp.format(now)
        return try await write { tx in
            let increment = counts ? 1 : 0
            var dead = 0
            for item in items {
                let attempts = item.attempts + increment
                let status: OutboxStatus = attempts >= maxAttempts ? .dead : .pending
                if status == .dead { dead += 1 }
                try await tx.execute(
                    "UPDATE outbox SET status = ?, attempts = ?, last_error = ?, next_attempt_at = ? WHERE seq = ?",
                    status.rawValue, attempts, status == .dead ? "gave up after \(attempts) attempts: \(error)" : error,
                    Timestamp.format(retryAt), item.seq)
            }
            try await Self.setSyncState("push.last_error", error, tx: tx)
            try await Self.setSyncState("push.last_error_at", timestamp, tx: tx)
            return dead
        }
    }

    /// Queue depth by status, the oldest pending row and the last push outcome.
    package func syncStatus() async throws -> SyncStatus {
        try await read { tx in
            let counts = try await Self.outboxCounts(tx)
            let oldest: String? = try await tx.value(
                """
                SELECT created_at FROM outbox WHERE seq >= \(OutboxPendingMark.sql)
                    AND status IN ('pending', 'inflight') ORDER BY seq LIMIT 1
                """)
            let state = Dictionary(
                uniqueKeysWithValues: try await tx.rows("SELECT key, value FROM sync_state").map {
                    ($0["key"] as String, $0["value"] as String)
                })
            return SyncStatus(
                counts: counts, oldestPendingAt: oldest, lastSuccessAt: state["push.last_success_at"],
                lastError: state["push.last_error"], lastErrorAt: state["push.last_error_at"])
        }
    }

    /// The dead-letter list, oldest first.
    package func syncDeadLetters(limit: Int = 1_000) async throws -> [SyncDeadLetter] {
        try await read { tx in
            try await tx.rows(
                """
                SELECT seq, entity, entity_id, version, idempotency_key, attempts, last_error, created_at FROM outbox
                WHERE status = 'dead' ORDER BY seq LIMIT ?
                """,
                limit
            ).map { row in
                SyncDeadLetter(
                    seq: row["seq"], entity: row["entity"], entityID: row["entity_id"],
                    key: row["idempotency_key"]
                        ?? "\(row["entity"] as String):\(row["entity_id"] as String):v\(row["version"] as Int)",
                    attempts: row["attempts"], lastError: row["last_error"] ?? "", createdAt: row["created_at"])
            }
        }
    }

    /// Puts dead rows back in the queue with a fresh attempt count: one (by outbox seq) or
    /// all when `seq` is nil; the queue's mark moves down to the lowest of them. Returns how
    /// many.
    @discardableResult
    package func retryDeadLetters(seq: Int64? = nil) async throws -> Int {
        try await write { tx in
            try await tx.dialect.lock(OutboxPendingMark.lockKey, in: tx)
            let filter = seq == nil ? "" : " AND seq = ?"
            let retried: [Int64] = try await tx.values(
                """
                UPDATE outbox SET status = 'pending', attempts = 0, next_attempt_at = NULL WHERE status = 'dead'\(filter)
                RETURNING seq
                """,
                seq.map { [$0.sqlValue] } ?? [])
            if let lowest = retried.min() { try await OutboxPendingMark.lower(to: lowest, tx: tx) }
            return retried.count
        }
    }

    // MARK: - Sync state

    package func syncState(_ key: String) async throws -> String? {
        try await read { tx in try await tx.value("SELECT value FROM sync_state WHERE key = ?", key) }
    }

    package func setSyncState(_ key: String, _ value: String) async throws {
        try await write { tx in try await Self.setSyncState(key, value, tx: tx) }
    }

    static func setSyncState(_ key: String, _ value: String, tx: any SQLTransaction) async throws {
        try await tx.execute(
            "INSERT INTO sync_state (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            key, value)
    }
}

extension SyncResult? {
    /// Applied or duplicate: the backend holds it.
    fileprivate var isDelivered: Bool {
        switch self {
        case .applied?, .duplicate?: return true
        case .rejected?, nil: return false
        }
    }
}
