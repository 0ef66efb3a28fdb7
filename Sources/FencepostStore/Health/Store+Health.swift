package import FencepostCore
import Foundation

/// What committing an import did, by event kind.
package struct HealthCommitSummary: Sendable, Hashable {
    package var created: [String: Int] = [:]
    package var updated: [String: Int] = [:]
    package var unchanged = 0

    package init() {}
}

/// Health events: written with the kinds' anchors and the sources seen, in one transaction.
extension Store {
    /// Per kind: the anchor (newest creation time, seconds) of the owner's last import.
    package func healthAnchors(owner: String) async throws -> [String: Double] {
        try await read { tx in
            var anchors: [String: Double] = [:]
            for row in try await tx.rows("SELECT kind, anchor_ms FROM health_anchors WHERE owner = ?", owner) {
                let milliseconds: Int64 = row["anchor_ms"]
                anchors[row["kind"]] = Double(milliseconds) / 1000
            }
            return anchors
        }
    }

    /// The sources of the owner's last import, most records first.
    package func healthSources(owner: String) async throws -> [(source: String, records: Int)] {
        try await read { tx in
            try await tx.rows(
                "SELECT source, records FROM health_sources WHERE owner = ? ORDER BY records DESC, source", owner
            )
            .map { ($0["source"], $0["records"]) }
        }
    }

    /// Writes new events, updates those whose properties changed (a new version, and an outbox
    /// row for it), and advances the anchors — all or nothing. With `file`, records that export
    /// as imported in the same transaction; nil, writing nothing, when a file with the same
    /// content already was.
    package func commitHealth(
        owner: String, events: [HealthEvent], anchors: [String: Double], sources: [String: Int],
        recording file: ImportedFile? = nil
    ) async throws -> HealthCommitSummary? {
        try await write { tx in
            if let file, try await !Self.record(file, in: tx) { return nil }
            let now = Timestamp.format(Date())
            var summary = HealthCommitSummary()
            for event in events {
                switch try await Self.upsert(event, now: now, tx: tx) {
                case .created: summary.created[event.kind.rawValue, default: 0] += 1
                case .updated: summary.updated[event.kind.rawValue, default: 0] += 1
                case .unchanged: summary.unchanged += 1
                }
            }
            for (kind, anchor) in anchors {
                try await tx.execute(
                    """
                    INSERT INTO health_anchors (owner, kind, anchor_ms, updated_at) VALUES (?, ?, ?, ?)
                    ON CONFLICT(owner, kind) DO UPDATE SET anchor_ms = CASE WHEN health_anchors.anchor_ms > excluded.anchor_ms
                        THEN health_anchors.anchor_ms ELSE excluded.anchor_ms END, updated_at = excluded.updated_at
                    """,
                    owner, kind, Timestamp.milliseconds(anchor), now)
            }
            if !sources.isEmpty {
                try await tx.execute("DELETE FROM health_sources WHERE owner = ?", owner)
                for (source, records) in sources.sorted(by: { $0.key < $1.key }) {
                    try await tx.execute(
                        "INSERT INTO health_sources (owner, source, records, updated_at) VALUES (?, ?, ?, ?)", owner,
                        source, records, now)
                }
            }
            return summary
        }
    }

    private enum UpsertOutcome { case created, updated, unchanged }

    private static func upsert(_ event: HealthEvent, now: String, tx: any SQLTransaction) async throws -> UpsertOutcome
    {
        let properties = JSONValue.object(event.properties).canonicalText()
        let time = Timestamp.format(seconds: event.time)
        let existing = try await tx.row("SELECT properties, time, version FROM events WHERE id = ?", event.id)
        let version: Int
        if let existing {
            guard existing["properties"] as String != properties || existing["time"] as String != time else {
                return .unchanged
            }
            version = existing["version"] + 1
            try await tx.execute(
                "UPDATE events SET properties = ?, time = ?, time_ms = ?, version = ? WHERE id = ?",
                properties, time, Timestamp.milliseconds(event.time), version, event.id)
        } else {
            version = 1
            try await tx.execute(
                """
                INSERT INTO events (id, kind, source, device, time_ms, time, properties, version, created_at)
                VALUES (?, ?, 'health', ?, ?, ?, ?, 1, ?)
                """,
                event.id, event.kind.rawValue, event.owner, Timestamp.milliseconds(event.time), time, properties, now)
        }
        // A health event's sync payload: unlike a geofence event's (`EventRow.geofencePayload`)
        // it carries its version (a re-import may update it in place) and its properties, and
        // no region, visit, flags or coordinates. Consumers rely on both shapes as they are.
        var payload = CanonicalJSONObject()
        payload.add("device", .string(event.owner))
        payload.add("id", .string(event.id))
        payload.add("kind", .string(event.kind.rawValue))
        payload.add("properties", .object(event.properties))
        payload.add("source", .string("health"))
        payload.add("time", .string(time))
        payload.add("version", .number(Double(version)))
        try await enqueue(entity: .event, id: event.id, version: version, payload: payload.text, now: now, tx: tx)
        return version == 1 ? .created : .updated
    }
}
