import FencepostCore

/// The visits of a device in a region that it reports transitions for, worked out again from
/// every stored enter and exit of both sides (``StayMerge``) and written where they differ: a
/// visit opened, changed (its exit) or gone (merged into another, whose id its first enter
/// gives), and events moved to the visit of their stay. Every change goes to the outbox with
/// its own copy of the entity (a row referring to the entity is rendered first, since the
/// entity changes under it), so sync, webhooks and streams see the merged visits.
extension Store {
    /// Merges again the visits of `device` in `region`; in the caller's transaction, under the
    /// device's lock. `fresh` are events just inserted and not enqueued yet: each goes to the
    /// outbox once, as version 1, in its merged visit.
    static func mergeStays(
        device: String, region: String, fresh: Set<String> = [], window: Double, now: String, tx: any SQLTransaction
    ) async throws {
        let events = try await tx.rows(
            "SELECT \(eventColumns()), version FROM events WHERE device = ? AND region = ? AND source = 'geofence'",
            device, region
        ).map { (row: EventRow(row: $0), version: $0["version"] as Int) }
        let stored = try await tx.rows(
            "SELECT \(visitColumns) FROM visits WHERE device = ? AND region = ?", device, region
        ).map(VisitRow.init(row:))
        var inputs: [StayMerge.Input] = []
        for (event, _) in events {
            guard let kind = EventKind(rawValue: event.kind), kind != .absent else { continue }
            let flags = EventFlags(names: event.flags)
            inputs.append(
                StayMerge.Input(
                    eventID: event.id, kind: kind, time: event.timeMs.seconds, fromDevice: flags.contains(.device),
                    reason: flags.contains(.schedule) ? .scheduleEnded : .exit))
        }
        // Closings no exit event records (a region removed, changed or unassigned; a reset).
        for visit in stored {
            guard let exitedMs = visit.exitedMs, let reason = visit.exitReason.flatMap(VisitExitReason.init),
                reason != .exit, reason != .scheduleEnded
            else { continue }
            inputs.append(
                StayMerge.Input(eventID: nil, kind: .exit, time: exitedMs.seconds, fromDevice: false, reason: reason))
        }
        let merged = StayMerge(window: window).merge(inputs, device: device, region: region)
        try await applyVisits(merged.visits, over: stored, now: now, tx: tx)
        for (event, version) in events {
            var moved = event
            if let visitID = merged.visitOfEvent[event.id] { moved.visitID = visitID }
            if fresh.contains(event.id) {
                if moved.visitID != event.visitID {
                    try await tx.execute("UPDATE events SET visit_id = ? WHERE id = ?", moved.visitID, event.id)
                }
                try await enqueue(
                    entity: .event, id: event.id, version: 1, payload: moved.geofencePayload, now: now, tx: tx)
                continue
            }
            guard moved.visitID != event.visitID else { continue }
            try await OutboxPayload.storeRenderedPayloads(entity: .event, id: event.id, tx: tx)
            try await tx.execute(
                "UPDATE events SET visit_id = ?, version = ? WHERE id = ?", moved.visitID, version + 1, event.id)
            try await enqueue(
                entity: .event, id: event.id, version: version + 1, payload: moved.geofencePayload, now: now, tx: tx)
        }
    }

    /// Writes `visits` where the stored ones (`stored`) differ, and deletes the stored ones that
    /// are no longer a stay of their own (merged into a stay another enter began earlier): the
    /// delete's payload is the visit's last form, so device-confined feeds and a receiving
    /// store see whose it was.
    private static func applyVisits(_ visits: [Visit], over stored: [VisitRow], now: String, tx: any SQLTransaction)
        async throws
    {
        let storedByID = Dictionary(stored.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        for visit in visits {
            var row = VisitRow(opened: visit)
            if let exitedAt = visit.exitedAt { row = row.closed(at: exitedAt, reason: visit.exitReason ?? .exit) }
            guard let old = storedByID[visit.id] else {
                row.version = 1
                try await tx.execute(
                    """
                    INSERT INTO visits (id, device, region, entered_ms, entered_at, exited_ms, exited_at, status, exit_reason,
                        version, updated_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?)
                    """, row.id, row.device, row.region, row.enteredMs, row.enteredAt, row.exitedMs, row.exitedAt,
                    row.status, row.exitReason, now)
                try await enqueue(entity: .visit, id: row.id, version: 1, payload: row.jsonText, now: now, tx: tx)
                continue
            }
            guard old.exitedMs != row.exitedMs || old.status != row.status || old.exitReason != row.exitReason else {
                continue
            }
            row.version = old.version + 1
            try await OutboxPayload.storeRenderedPayloads(entity: .visit, id: row.id, tx: tx)
            try await tx.execute(
                """
                UPDATE visits SET exited_ms = ?, exited_at = ?, status = ?, exit_reason = ?, version = ?, updated_at = ?
                WHERE id = ?
                """, row.exitedMs, row.exitedAt, row.status, row.exitReason, row.version, now, row.id)
            try await enqueue(entity: .visit, id: row.id, version: row.version, payload: row.jsonText, now: now, tx: tx)
        }
        let kept = Set(visits.map(\.id))
        for old in stored where !kept.contains(old.id) {
            try await OutboxPayload.storeRenderedPayloads(entity: .visit, id: old.id, tx: tx)
            try await tx.execute("DELETE FROM visits WHERE id = ?", old.id)
            try await enqueue(
                entity: .visit, id: old.id, op: .delete, version: old.version + 1, payload: old.jsonText, now: now,
                tx: tx)
        }
    }
}
