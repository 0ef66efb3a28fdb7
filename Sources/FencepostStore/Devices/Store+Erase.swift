package import FencepostCore
package import Foundation

/// What erasing a device removed, table by table (rows), and the outbox deletes it queued.
package struct DeviceErasure: Sendable, Equatable {
    package var device: String
    /// Rows removed per table, tables with none left out.
    package var removed: [String: Int] = [:]
    /// Delete rows queued in the outbox: one per event and visit, so a synced backend and every
    /// sink erase them too.
    package var outboxDeletes = 0

    package var isEmpty: Bool { removed.values.allSatisfy { $0 == 0 } }

    /// `{"device", "removed": {table: rows}, "outbox_deletes"}`: what `devices erase --json`
    /// prints and `DELETE /v1/devices/{id}?erase=true` answers.
    package var json: JSONValue {
        .object([
            "device": .string(device), "removed": .object(removed.mapValues { .number(Double($0)) }),
            "outbox_deletes": .number(Double(outboxDeletes)),
        ])
    }
}

extension Store {
    /// Removes every row that names `device`: its events, visits, stored fixes, stops and trips, state, roster
    /// entry, device-reported regions, health import anchors and sources, tokens scoped to it,
    /// and the outbox rows and dead letters that carry its events and visits. Queues a delete
    /// per event and visit (payload `{}`, ids only: the device's name is in none of them), so
    /// consumers erase what they were sent.
    ///
    /// One transaction under the device's lock: a concurrent ingest of the device waits, and
    /// runs after as a first fix of a new device. The device's state row is deleted, not
    /// emptied; a service instance that had it cached reads it again (its cached version is no
    /// longer stored, see ``save(_:now:tx:)``).
    package func eraseDevice(_ device: String, at now: Date = Date()) async throws -> DeviceErasure {
        let timestamp = Timestamp.format(now)
        return try await write { tx in
            try await tx.dialect.lock("device:" + device, in: tx)
            var erasure = DeviceErasure(device: device)
            let events = try await tx.rows("SELECT id, version FROM events WHERE device = ?", device)
            let visits = try await tx.rows("SELECT id, version FROM visits WHERE device = ?", device)

            // The outbox rows and dead letters carrying them go first: a row referring to an
            // event is rendered from it.
            erasure.removed["outbox"] = try await tx.execute(
                """
                DELETE FROM outbox WHERE seq IN (
                    SELECT o.seq FROM outbox o
                    LEFT JOIN events e ON o.entity = 'event' AND e.id = o.entity_id
                    LEFT JOIN visits v ON o.entity = 'visit' AND v.id = o.entity_id
                    WHERE e.device = ? OR v.device = ? OR \(tx.dialect.jsonText("o.payload", "device")) = ?)
                """, device, device, device)
            erasure.removed["webhook_dead_letters"] = try await tx.execute(
                "DELETE FROM webhook_dead_letters WHERE \(tx.dialect.jsonText("payload", "device")) = ?", device)

            for table in [
                "events", "visits", "devices", "roster", "device_reported_regions", "fix_history", "stops", "trips",
                "movement_state",
            ] {
                erasure.removed[table] = try await tx.execute("DELETE FROM \(table) WHERE device = ?", device)
            }
            for table in ["health_anchors", "health_sources"] {
                erasure.removed[table] = try await tx.execute("DELETE FROM \(table) WHERE owner = ?", device)
            }
            erasure.removed["tokens"] = try await tx.execute("DELETE FROM tokens WHERE scope = ?", "device:" + device)

            for (entity, rows) in [(SyncEntity.event, events), (.visit, visits)] {
                for row in rows {
                    let id: String = row["id"]
                    let version = Int(row["version"] as Int64) + 1
                    try await Self.enqueue(
                        entity: entity, id: id, op: .delete, version: version, payload: "{}", now: timestamp, tx: tx)
                    erasure.outboxDeletes += 1
                }
            }
            erasure.removed = erasure.removed.filter { $0.value > 0 }
            if !erasure.isEmpty {
                try await tx.execute(
                    """
                    INSERT INTO store_meta (key, value) VALUES ('erasures', 1)
                    ON CONFLICT(key) DO UPDATE SET value = store_meta.value + 1
                    """)
            }
            return erasure
        }
    }
}

extension Store {
    /// Grows by one with every erasure that removed something: what a sink holding copies
    /// elsewhere (an MQTT broker's retained messages) compares to know when to look for them.
    package func erasureCount() async throws -> Int64 {
        try await read { tx in try await tx.value("SELECT value FROM store_meta WHERE key = 'erasures'") ?? 0 }
    }

    /// Every device the store knows: with a state (it sent fixes) or on the roster.
    package func knownDevices() async throws -> Set<String> {
        try await read { tx in
            Set(try await tx.values("SELECT device FROM devices UNION SELECT device FROM roster") as [String])
        }
    }
}
