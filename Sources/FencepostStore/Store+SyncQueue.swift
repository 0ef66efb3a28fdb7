public import FencepostCore
public import Foundation
import GRDB

/// An outbox row on its way to the backend.
public struct OutboxItem: Sendable, Hashable {
    public var seq: Int64
    public var mutation: SyncMutation
    public var attempts: Int
}

/// A mutation the backend rejected, or that ran out of attempts.
public struct SyncDeadLetter: Sendable, Hashable {
    public var seq: Int64
    public var entity: String
    public var entityID: String
    public var key: String
    public var attempts: Int
    public var lastError: String
    public var createdAt: String
}

/// The queue as `fencepost sync status` reports it.
public struct SyncStatus: Sendable, Hashable {
    public var counts: [String: Int]
    /// When the oldest pending mutation was queued.
    public var oldestPendingAt: String?
    public var lastSuccessAt: String?
    public var lastError: String?
    public var lastErrorAt: String?
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
    public func requeueInflight() throws -> Int {
        try writer.write { db in
            try db.execute(sql: "UPDATE outbox SET status = 'pending' WHERE status = 'inflight'")
            return db.changesCount
        }
    }

    /// Claims the next pending rows in outbox order (up to `limit` rows and about `maxBytes`
    /// of payload, at least one row) and marks them in flight.
    public func claimPushBatch(limit: Int, maxBytes: Int) throws -> [OutboxItem] {
        try writer.write { db in
            let rows = try Row.fetchCursor(
                db, sql: OutboxPayload.select + " WHERE o.status = 'pending' ORDER BY o.seq LIMIT ?", arguments: [limit])
            var items: [OutboxItem] = []
            var bytes = 0
            while let row = try rows.next() {
                let change = OutboxPayload.change(row)
                bytes += change.mutation.payload.utf8.count + 200
                if !items.isEmpty && bytes > maxBytes { break }
                items.append(OutboxItem(seq: change.seq, mutation: change.mutation, attempts: row["attempts"]))
            }
            guard let first = items.first, let last = items.last else { return [] }
            try db.execute(
                sql: "UPDATE outbox SET status = 'inflight' WHERE status = 'pending' AND seq BETWEEN ? AND ?",
                arguments: [first.seq, last.seq])
            return items
        }
    }

    /// Records the backend's answers: applied and duplicate rows are delivered, rejected ones
    /// dead with the backend's reason; rows without an answer go back to pending.
    /// Returns (delivered, dead).
    @discardableResult
    public func acknowledge(_ items: [OutboxItem], results: [String: SyncResult], at now: Date = Date()) throws -> (delivered: Int, dead: Int) {
        let timestamp = Timestamp.format(now)
        return try writer.write { db in
            var delivered = 0
            var dead = 0
            let deliver = try db.cachedStatement(sql: """
                UPDATE outbox SET status = 'delivered', delivered_at = ?, attempts = attempts + 1, last_error = NULL,
                    next_attempt_at = NULL WHERE seq = ?
                """)
            let bury = try db.cachedStatement(sql: """
                UPDATE outbox SET status = 'dead', attempts = attempts + 1, last_error = ?, next_attempt_at = NULL WHERE seq = ?
                """)
            let requeue = try db.cachedStatement(sql: "UPDATE outbox SET status = 'pending' WHERE seq = ?")
            // The usual answer, every row applied or a duplicate: one statement for the batch
            // (a claimed batch is every in-flight row between its first and last seq).
            if let first = items.first, let last = items.last, items.allSatisfy({ results[$0.mutation.key].isDelivered }) {
                try db.execute(sql: """
                    UPDATE outbox SET status = 'delivered', delivered_at = ?, attempts = attempts + 1, last_error = NULL,
                        next_attempt_at = NULL WHERE status = 'inflight' AND seq BETWEEN ? AND ?
                    """, arguments: [timestamp, first.seq, last.seq])
                let delivered = db.changesCount
                try Self.setSyncState("push.last_success_at", timestamp, db: db)
                return (delivered, 0)
            }
            for item in items {
                switch results[item.mutation.key] {
                case .applied?, .duplicate?:
                    try deliver.execute(arguments: [timestamp, item.seq])
                    delivered += 1
                case .rejected(let reason)?:
                    try bury.execute(arguments: ["rejected: \(reason)", item.seq])
                    dead += 1
                case nil:
                    try requeue.execute(arguments: [item.seq])
                }
            }
            try Self.setSyncState("push.last_success_at", timestamp, db: db)
            return (delivered, dead)
        }
    }

    /// Records a failed attempt at sending `items`: back to pending with the error and when
    /// the next attempt is due. When `counts` (the request may have reached the backend), the
    /// attempt counts, and rows that reach `maxAttempts` go dead. Returns how many went dead.
    @discardableResult
    public func recordPushFailure(
        _ items: [OutboxItem], error: String, counts: Bool, maxAttempts: Int, retryAt: Date, at now: Date = Date()
    ) throws -> Int {
        let timestamp = Timestamp.format(now)
        return try writer.write { db in
            let increment = counts ? 1 : 0
            var dead = 0
            for item in items {
                let attempts = item.attempts + increment
                let status = attempts >= maxAttempts ? "dead" : "pending"
                if status == "dead" { dead += 1 }
                try db.cachedStatement(sql: """
                    UPDATE outbox SET status = ?, attempts = ?, last_error = ?, next_attempt_at = ? WHERE seq = ?
                    """).execute(arguments: [
                        status, attempts, status == "dead" ? "gave up after \(attempts) attempts: \(error)" : error,
                        Timestamp.format(retryAt), item.seq,
                    ])
            }
            try Self.setSyncState("push.last_error", error, db: db)
            try Self.setSyncState("push.last_error_at", timestamp, db: db)
            return dead
        }
    }

    /// Queue depth by status, the oldest pending row and the last push outcome.
    public func syncStatus() throws -> SyncStatus {
        try writer.read { db in
            let counts = try Self.outboxCounts(db)
            let oldest = try String.fetchOne(db, sql: """
                SELECT created_at FROM outbox WHERE status IN ('pending', 'inflight') ORDER BY seq LIMIT 1
                """)
            let state = try Dictionary(uniqueKeysWithValues: Row.fetchAll(db, sql: "SELECT key, value FROM sync_state").map {
                (String($0["key"]), String($0["value"]))
            })
            return SyncStatus(
                counts: counts, oldestPendingAt: oldest, lastSuccessAt: state["push.last_success_at"],
                lastError: state["push.last_error"], lastErrorAt: state["push.last_error_at"])
        }
    }

    /// The dead-letter list, oldest first.
    public func syncDeadLetters(limit: Int = 1_000) throws -> [SyncDeadLetter] {
        try writer.read { db in
            try Row.fetchAll(db, sql: """
                SELECT seq, entity, entity_id, version, idempotency_key, attempts, last_error, created_at FROM outbox
                WHERE status = 'dead' ORDER BY seq LIMIT ?
                """, arguments: [limit]).map { row in
                    SyncDeadLetter(
                        seq: row["seq"], entity: row["entity"], entityID: row["entity_id"],
                        key: row["idempotency_key"] ?? "\(row["entity"] as String):\(row["entity_id"] as String):v\(row["version"] as Int)",
                        attempts: row["attempts"], lastError: row["last_error"] ?? "", createdAt: row["created_at"])
                }
        }
    }

    /// Puts dead rows back in the queue with a fresh attempt count: one (by outbox seq) or
    /// all when `seq` is nil. Returns how many.
    @discardableResult
    public func retryDeadLetters(seq: Int64? = nil) throws -> Int {
        try writer.write { db in
            let filter = seq == nil ? "" : " AND seq = ?"
            try db.execute(
                sql: "UPDATE outbox SET status = 'pending', attempts = 0, next_attempt_at = NULL WHERE status = 'dead'\(filter)",
                arguments: seq.map { [$0] } ?? [])
            return db.changesCount
        }
    }

    // MARK: - Sync state

    public func syncState(_ key: String) throws -> String? {
        try writer.read { db in try String.fetchOne(db, sql: "SELECT value FROM sync_state WHERE key = ?", arguments: [key]) }
    }

    public func setSyncState(_ key: String, _ value: String) throws {
        try writer.write { db in try Self.setSyncState(key, value, db: db) }
    }

    static func setSyncState(_ key: String, _ value: String, db: Database) throws {
        try db.execute(
            sql: "INSERT INTO sync_state (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            arguments: [key, value])
    }
}

extension Optional<SyncResult> {
    /// Applied or duplicate: the backend holds it.
    fileprivate var isDelivered: Bool {
        switch self {
        case .applied?, .duplicate?: return true
        case .rejected?, nil: return false
        }
    }
}
