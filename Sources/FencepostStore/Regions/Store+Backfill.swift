package import FencepostCore
package import Foundation

/// What rewriting a device's events and visits did, by row.
package struct BackfillCounts: Sendable, Equatable {
    package var added = 0
    package var removed = 0
    package var changed = 0
    package var unchanged = 0

    package init() {}

    package static func + (a: BackfillCounts, b: BackfillCounts) -> BackfillCounts {
        var sum = a
        sum.added += b.added
        sum.removed += b.removed
        sum.changed += b.changed
        sum.unchanged += b.unchanged
        return sum
    }
}

extension Store {
    /// Makes `device`'s events (from `since` on) and visits (entered from `since` on) in
    /// `regions` what a replay gave (`events`, `visits`), in one transaction under the device's
    /// lock: a row the replay gave too, alike, stays and sends nothing (ids are deterministic);
    /// a row it did not give is deleted with an outbox delete; a new or different row is
    /// written with an outbox upsert of its next version. When the device's state still ends
    /// at the replay's last fix, its memberships of `regions` become the replay's, so the next
    /// fix continues the rewritten visits instead of entering again.
    package func rewriteHistory(
        device: String, regions: Set<String>, since: Double, events: [EventRow], visits: [VisitRow],
        memberships: [String: Membership], lastFix: Double?, at now: Date = Date()
    ) async throws -> BackfillCounts {
        guard !regions.isEmpty else { return BackfillCounts() }
        let timestamp = Timestamp.format(now)
        let sinceMs = Timestamp.milliseconds(since)
        let list = Array(regions).sorted()
        let placeholders = Array(repeating: "?", count: list.count).joined(separator: ", ")
        return try await write { tx in
            try await tx.dialect.lock("device:" + device, in: tx)
            var counts = BackfillCounts()
            let arguments: [SQLValue] = [.text(device), .integer(sinceMs)] + list.map { .text($0) }
            let eventRows = try await tx.rows(
                "SELECT * FROM events WHERE device = ? AND time_ms >= ? AND region IN (\(placeholders))", arguments)
            let oldEvents = eventRows.map(EventRow.init(row:))
            var versions: [String: Int] = [:]
            for row in eventRows { versions[row["id"]] = Int(row["version"] as Int64) }
            let oldVisits = try await tx.rows(
                "SELECT * FROM visits WHERE device = ? AND entered_ms >= ? AND region IN (\(placeholders))", arguments
            ).map(VisitRow.init(row:))

            // Events.
            let newEvents = Dictionary(events.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
            for old in oldEvents where newEvents[old.id] == nil {
                try await OutboxPayload.storeRenderedPayloads(entity: .event, id: old.id, tx: tx)
                try await tx.execute("DELETE FROM events WHERE id = ?", old.id)
                try await Self.enqueue(
                    entity: .event, id: old.id, op: .delete, version: (versions[old.id] ?? 1) + 1, payload: "{}",
                    now: timestamp, tx: tx)
                counts.removed += 1
            }
            let oldEventsByID = Dictionary(oldEvents.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
            for event in events {
                let version: Int
                if let old = oldEventsByID[event.id] {
                    guard old != event else {
                        counts.unchanged += 1
                        continue
                    }
                    try await OutboxPayload.storeRenderedPayloads(entity: .event, id: event.id, tx: tx)
                    version = (versions[event.id] ?? 1) + 1
                    counts.changed += 1
                } else {
                    version = 1
                    counts.added += 1
                }
                try await Self.upsert(event, version: version, now: timestamp, tx: tx)
                try await Self.enqueue(
                    entity: .event, id: event.id, version: version, payload: event.geofencePayload, now: timestamp,
                    tx: tx)
            }

            // Visits.
            let newVisits = Dictionary(visits.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
            for old in oldVisits where newVisits[old.id] == nil {
                try await OutboxPayload.storeRenderedPayloads(entity: .visit, id: old.id, tx: tx)
                try await tx.execute("DELETE FROM visits WHERE id = ?", old.id)
                try await Self.enqueue(
                    entity: .visit, id: old.id, op: .delete, version: old.version + 1, payload: "{}", now: timestamp,
                    tx: tx)
                counts.removed += 1
            }
            let oldVisitsByID = Dictionary(oldVisits.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
            for var visit in visits {
                if let old = oldVisitsByID[visit.id] {
                    guard
                        old.exitedMs != visit.exitedMs || old.status != visit.status
                            || old.exitReason != visit.exitReason
                    else {
                        counts.unchanged += 1
                        continue
                    }
                    try await OutboxPayload.storeRenderedPayloads(entity: .visit, id: visit.id, tx: tx)
                    visit.version = old.version + 1
                    counts.changed += 1
                } else {
                    visit.version = visit.isOpen ? 1 : 2
                    counts.added += 1
                }
                try await Self.upsert(visit, now: timestamp, tx: tx)
                try await Self.enqueue(
                    entity: .visit, id: visit.id, version: visit.version, payload: visit.jsonText, now: timestamp,
                    tx: tx)
            }

            // The device's memberships, when nothing came after the replay.
            if var state = try await Self.deviceState(device, tx: tx), state.monitor.lastFix?.time == lastFix {
                for region in regions { state.monitor.memberships[region] = memberships[region] }
                try await Self.save([(device, state)], now: timestamp, tx: tx)
            }
            return counts
        }
    }

    private static func upsert(_ event: EventRow, version: Int, now: String, tx: any SQLTransaction) async throws {
        let values: [any SQLValueConvertible] = [
            event.id, event.kind, event.source, event.device, event.region, event.visitID, event.timeMs, event.time,
            event.lat, event.lon, event.flags.joined(separator: ","), event.properties, version, now,
        ]
        try await tx.execute(
            """
            INSERT INTO events (id, kind, source, device, region, visit_id, time_ms, time, lat, lon, flags, properties, version, created_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT(id) DO UPDATE SET kind = excluded.kind, visit_id = excluded.visit_id, time_ms = excluded.time_ms,
                time = excluded.time, lat = excluded.lat, lon = excluded.lon, flags = excluded.flags,
                properties = excluded.properties, version = excluded.version
            """, values.map(\.sqlValue))
    }

    private static func upsert(_ visit: VisitRow, now: String, tx: any SQLTransaction) async throws {
        let values: [any SQLValueConvertible] = [
            visit.id, visit.device, visit.region, visit.enteredMs, visit.enteredAt, visit.exitedMs, visit.exitedAt,
            visit.status, visit.exitReason, visit.version, now,
        ]
        try await tx.execute(
            """
            INSERT INTO visits (id, device, region, entered_ms, entered_at, exited_ms, exited_at, status, exit_reason, version, updated_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT(id) DO UPDATE SET exited_ms = excluded.exited_ms, exited_at = excluded.exited_at,
                status = excluded.status, exit_reason = excluded.exit_reason, version = excluded.version,
                updated_at = excluded.updated_at
            """, values.map(\.sqlValue))
    }
}
