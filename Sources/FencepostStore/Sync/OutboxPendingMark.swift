/// Where the push queue's rows start: no outbox row below this `seq` is pending or in flight
/// (`store_meta`, 0 until first moved). With it a claim finds the lowest pending rows by
/// walking the primary key from the mark, so the outbox needs no index entry for a pending
/// row: on PostgreSQL a big ingest's commit numbers every outbox row under one lock, and an
/// entry per row in an index by status was over a quarter of that insert.
///
/// Why it holds:
/// - A new row is numbered above every row there is (under the numbering lock on PostgreSQL,
///   so above every row a reader can see), so above the mark.
/// - A row in flight goes back to pending, dead or delivered: it was at or above the mark.
/// - A claim moves the mark up to the lowest pending or in-flight row, or past the last row.
/// - A dead row retried moves the mark down to it (``lower(to:tx:)``).
/// Claims and retries take ``lockKey`` first (PostgreSQL's transactions read what committed
/// before each statement), so a retry is never missed by a claim that moves the mark past it.
enum OutboxPendingMark {
    static let key = "outbox_pending_from"
    static let lockKey = "outbox pending mark"

    /// The mark as SQL, for a condition `seq >= …` read in the same statement as its rows.
    static let sql = "COALESCE((SELECT value FROM store_meta WHERE key = '\(key)'), 0)"

    /// The lowest pending or in-flight row at or above `?`: written as neither of the other two
    /// statuses for the planner's sake (``Store/claimSelect``).
    static let lowestUnsettled =
        "SELECT seq FROM outbox WHERE seq >= ? AND status <> 'delivered' AND status <> 'dead' ORDER BY seq LIMIT 1"

    /// Moves the mark up to the lowest pending or in-flight row (past the last row when there
    /// is none) and returns it. The caller holds ``lockKey``.
    static func advance(_ tx: any SQLTransaction) async throws -> Int64 {
        let from: Int64 = try await tx.value("SELECT value FROM store_meta WHERE key = ?", key) ?? 0
        let to: Int64
        if let lowest: Int64 = try await tx.value(lowestUnsettled, from) {
            to = lowest
        } else {
            to = max(from, (try await tx.value("SELECT MAX(seq) FROM outbox") ?? 0) + 1)
        }
        if to != from { try await set(to, tx) }
        return to
    }

    /// Moves the mark down to `seq` if it is above it: a dead row retried. The caller holds
    /// ``lockKey``.
    static func lower(to seq: Int64, tx: any SQLTransaction) async throws {
        let from: Int64 = try await tx.value("SELECT value FROM store_meta WHERE key = ?", key) ?? 0
        if seq < from { try await set(seq, tx) }
    }

    private static func set(_ value: Int64, _ tx: any SQLTransaction) async throws {
        try await tx.execute(
            "INSERT INTO store_meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            key, value)
    }
}
