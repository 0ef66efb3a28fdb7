public import FencepostCore
import Foundation
import GRDB

/// What committing an import did, by event kind.
public struct HealthCommitSummary: Sendable, Hashable {
    public var created: [String: Int] = [:]
    public var updated: [String: Int] = [:]
    public var unchanged = 0

    public init() {}
}

/// Health events: written with the kinds' anchors and the sources seen, in one transaction.
extension Store {
    /// Per kind: the anchor (newest creation time, seconds) of the owner's last import.
    public func healthAnchors(owner: String) throws -> [String: Double] {
        try writer.read { db in
            var anchors: [String: Double] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT kind, anchor_ms FROM health_anchors WHERE owner = ?", arguments: [owner]) {
                let milliseconds: Int64 = row["anchor_ms"]
                anchors[row["kind"]] = Double(milliseconds) / 1000
            }
            return anchors
        }
    }

    /// The sources of the owner's last import, most records first.
    public func healthSources(owner: String) throws -> [(source: String, records: Int)] {
        try writer.read { db in
            try Row.fetchAll(
                db, sql: "SELECT source, records FROM health_sources WHERE owner = ? ORDER BY records DESC, source",
                arguments: [owner]
            ).map { ($0["source"], $0["records"]) }
        }
    }

    /// Writes new events, updates those whose properties changed (a new version, and an outbox
    /// row for it), and advances the anchors — all or nothing. With `file`, records that export
    /// as imported in the same transaction; nil, writing nothing, when a file with the same
    /// content already was.
    public func commitHealth(
        owner: String, events: [HealthEvent], anchors: [String: Double], sources: [String: Int], recording file: ImportedFile? = nil
    ) throws -> HealthCommitSummary? {
        try writer.write { db in
            if let file, try !Self.record(file, db: db) { return nil }
            let now = Timestamp.format(Date())
            var summary = HealthCommitSummary()
            for event in events {
                switch try Self.upsert(event, now: now, db: db) {
                case .created: summary.created[event.kind, default: 0] += 1
                case .updated: summary.updated[event.kind, default: 0] += 1
                case .unchanged: summary.unchanged += 1
                }
            }
            for (kind, anchor) in anchors {
                try db.execute(sql: """
                    INSERT INTO health_anchors (owner, kind, anchor_ms, updated_at) VALUES (?, ?, ?, ?)
                    ON CONFLICT(owner, kind) DO UPDATE SET anchor_ms = max(anchor_ms, excluded.anchor_ms), updated_at = excluded.updated_at
                    """, arguments: [owner, kind, Timestamp.milliseconds(anchor), now])
            }
            if !sources.isEmpty {
                try db.execute(sql: "DELETE FROM health_sources WHERE owner = ?", arguments: [owner])
                for (source, records) in sources {
                    try db.execute(
                        sql: "INSERT INTO health_sources (owner, source, records, updated_at) VALUES (?, ?, ?, ?)",
                        arguments: [owner, source, records, now])
                }
            }
            return summary
        }
    }

    private enum UpsertOutcome { case created, updated, unchanged }

    private static func upsert(_ event: HealthEvent, now: String, db: Database) throws -> UpsertOutcome {
        let properties = JSONValue.object(event.properties).canonicalText()
        let time = Timestamp.format(seconds: event.time)
        let existing = try Row.fetchOne(db, sql: "SELECT properties, time, version FROM events WHERE id = ?", arguments: [event.id])
        let version: Int
        if let existing {
            guard existing["properties"] != properties || existing["time"] != time else { return .unchanged }
            version = existing["version"] + 1
            try db.execute(
                sql: "UPDATE events SET properties = ?, time = ?, time_ms = ?, version = ? WHERE id = ?",
                arguments: [properties, time, Timestamp.milliseconds(event.time), version, event.id])
        } else {
            version = 1
            try db.execute(sql: """
                INSERT INTO events (id, kind, source, device, time_ms, time, properties, version, created_at)
                VALUES (?, ?, 'health', ?, ?, ?, ?, 1, ?)
                """, arguments: [event.id, event.kind, event.owner, Timestamp.milliseconds(event.time), time, properties, now])
        }
        var payload = CanonicalJSONObject()
        payload.add("device", .string(event.owner))
        payload.add("id", .string(event.id))
        payload.add("kind", .string(event.kind))
        payload.add("properties", .object(event.properties))
        payload.add("source", .string("health"))
        payload.add("time", .string(time))
        payload.add("version", .number(Double(version)))
        try enqueue(entity: "event", id: event.id, version: version, payload: payload.text, now: now, db: db)
        return version == 1 ? .created : .updated
    }
}
