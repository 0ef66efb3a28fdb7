import FencepostCore
package import Foundation

/// Retention of events and visits (`events_days`, `visits_days`): unset, they are kept for
/// ever; set, ``pruneEventsAndVisits(now:)`` deletes events older than `events_days` and closed
/// visits that ended more than `visits_days` ago. Local housekeeping: nothing goes to the
/// outbox (a synced backend keeps what it was sent, for as long as it likes). A row an
/// outbox row still waiting for `sync push` refers to is kept until it is sent; outbox rows
/// that refer to a deleted row go with it.
extension Store {
    package enum RetainedClass: String, Sendable, CaseIterable {
        case events, visits

        var key: String { rawValue + "_days" }
    }

    /// Days of the class the store keeps; nil: for ever.
    package func retentionDays(_ kind: RetainedClass) async throws -> Int? {
        try await read { tx in
            try await tx.value("SELECT value FROM store_meta WHERE key = ?", kind.key).map { (days: Int64) in Int(days)
            }
        }
    }

    /// Sets (or, with nil, clears) ``retentionDays(_:)`` for every process using this store.
    package func setRetentionDays(_ kind: RetainedClass, _ days: Int?) async throws {
        precondition((days ?? 1) >= 1, "a retention is a day at least")
        try await write { tx in
            if let days {
                try await tx.execute(
                    """
                    INSERT INTO store_meta (key, value) VALUES (?, ?)
                    ON CONFLICT(key) DO UPDATE SET value = excluded.value
                    """, kind.key, Int64(days))
            } else {
                try await tx.execute("DELETE FROM store_meta WHERE key = ?", kind.key)
            }
        }
    }

    /// Deletes the events and closed visits older than their retention; returns how many of
    /// each went.
    @discardableResult
    package func pruneEventsAndVisits(now: Date = Date()) async throws -> (events: Int, visits: Int) {
        let eventDays = try await retentionDays(.events)
        let visitDays = try await retentionDays(.visits)
        func cutoff(_ days: Int) -> Int64 { Timestamp.milliseconds(now.timeIntervalSince1970 - Double(days) * 86_400) }
        return try await write { tx in
            var counts = (events: 0, visits: 0)
            // Rows an outbox row not yet pushed refers to (its payload rendered from them): those
            // rows are at or above the queue's mark.
            let waiting = """
                SELECT entity_id FROM outbox WHERE seq >= \(OutboxPendingMark.sql) AND entity = ? AND payload IS NULL
                    AND status IN ('pending', 'inflight')
                """
            if let eventDays {
                let old = "SELECT id FROM events WHERE time_ms < ? AND id NOT IN (\(waiting))"
                try await tx.execute(
                    "DELETE FROM outbox WHERE entity = 'event' AND entity_id IN (\(old))", cutoff(eventDays), "event")
                counts.events = try await tx.execute(
                    "DELETE FROM events WHERE time_ms < ? AND id NOT IN (\(waiting))", cutoff(eventDays), "event")
            }
            if let visitDays {
                let old = "SELECT id FROM visits WHERE status = 'closed' AND exited_ms < ? AND id NOT IN (\(waiting))"
                try await tx.execute(
                    "DELETE FROM outbox WHERE entity = 'visit' AND entity_id IN (\(old))", cutoff(visitDays), "visit")
                counts.visits = try await tx.execute(
                    "DELETE FROM visits WHERE status = 'closed' AND exited_ms < ? AND id NOT IN (\(waiting))",
                    cutoff(visitDays), "visit")
            }
            return counts
        }
    }
}
