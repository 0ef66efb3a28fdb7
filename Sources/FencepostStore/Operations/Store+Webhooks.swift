import FencepostCore
package import Foundation

/// An event a webhook refused or that ran out of attempts.
package struct WebhookDeadLetter: Sendable, Hashable {
    package var id: Int64
    package var webhook: String
    package var outboxSeq: Int64
    package var eventID: String
    package var payload: String
    package var attempts: Int
    package var lastError: String
    package var createdAt: String
}

/// Webhook delivery state: per webhook, a cursor into the outbox's event rows, advanced only
/// after the webhook acknowledged (or the event was given up on and dead-lettered, in the same
/// transaction), so a restart resumes exactly where delivery stopped.
extension Store {
    /// The webhook's cursor; a webhook seen for the first time starts at the newest event
    /// (it receives new events, not the history).
    package func webhookCursor(_ webhook: String, at now: Date = Date()) async throws -> Int64 {
        try await write { tx in
            if let seq: Int64 = try await tx.value("SELECT last_seq FROM webhook_cursors WHERE webhook = ?", webhook) {
                return seq
            }
            let latest = try await Self.latestEventSeq(tx)
            try await tx.execute(
                "INSERT INTO webhook_cursors (webhook, last_seq, updated_at) VALUES (?, ?, ?)", webhook, latest,
                Timestamp.format(now))
            return latest
        }
    }

    /// Records that the webhook acknowledged everything up to `seq`.
    package func advanceWebhook(_ webhook: String, to seq: Int64, at now: Date = Date()) async throws {
        try await write { tx in
            try await tx.execute(
                "UPDATE webhook_cursors SET last_seq = CASE WHEN last_seq > ? THEN last_seq ELSE ? END, updated_at = ? WHERE webhook = ?",
                seq, seq, Timestamp.format(now), webhook)
        }
    }

    /// Gives up on one event: dead-letters it and moves the cursor past it, in one transaction.
    package func deadLetterWebhook(
        _ webhook: String, seq: Int64, eventID: String, payload: String, attempts: Int, error: String,
        at now: Date = Date()
    ) async throws {
        let timestamp = Timestamp.format(now)
        try await write { tx in
            try await tx.execute(
                """
                INSERT INTO webhook_dead_letters (webhook, outbox_seq, event_id, payload, attempts, last_error, created_at)
                VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING
                """,
                webhook, seq, eventID, payload, attempts, error, timestamp)
            try await tx.execute(
                "UPDATE webhook_cursors SET last_seq = CASE WHEN last_seq > ? THEN last_seq ELSE ? END, updated_at = ? WHERE webhook = ?",
                seq, seq, timestamp, webhook)
        }
    }

    package func webhookDeadLetters() async throws -> [WebhookDeadLetter] {
        try await read { tx in
            try await tx.rows(
                "SELECT id, webhook, outbox_seq, event_id, payload, attempts, last_error, created_at FROM webhook_dead_letters ORDER BY id"
            ).map { row in
                WebhookDeadLetter(
                    id: row["id"], webhook: row["webhook"], outboxSeq: row["outbox_seq"], eventID: row["event_id"],
                    payload: row["payload"],
                    attempts: row["attempts"], lastError: row["last_error"], createdAt: row["created_at"])
            }
        }
    }

    /// Deletes outbox rows delivered before `cutoff` that every webhook has passed; returns
    /// how many.
    package func deleteDeliveredOutbox(before cutoff: Date) async throws -> Int {
        try await write { tx in
            try await tx.execute(
                """
                DELETE FROM outbox WHERE status = 'delivered' AND delivered_at < ? AND entity != 'region'
                AND seq <= (SELECT COALESCE(MIN(last_seq), 9223372036854775807) FROM webhook_cursors)
                """,
                Timestamp.format(cutoff))
        }
    }
}
