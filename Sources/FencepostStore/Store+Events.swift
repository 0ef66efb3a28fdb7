import FencepostCore
import Foundation
import GRDB

/// Writing events and visits: every change also goes to the outbox, in the caller's transaction.
extension Store {
    /// Inserts an event unless it exists; returns whether it was new (and so enqueued).
    static func insert(_ event: GeofenceEvent, now: String, db: Database) throws -> Bool {
        let time = Timestamp.format(seconds: event.time)
        let flags = event.flags.names.joined(separator: ",")
        try db.cachedStatement(sql: """
            INSERT OR IGNORE INTO events (id, kind, source, device, region, visit_id, time_ms, time, lat, lon, flags, version, created_at)
            VALUES (?, ?, 'geofence', ?, ?, ?, ?, ?, ?, ?, ?, 1, ?)
            """).execute(arguments: [
                event.id, event.kind.rawValue, event.device, event.regionID, event.visitID,
                Timestamp.milliseconds(event.time), time, event.position?.lat, event.position?.lon, flags, now,
            ])
        guard db.changesCount > 0 else { return false }
        var payload = CanonicalJSONObject()
        payload.add("device", .string(event.device))
        payload.add("flags", .array(event.flags.names.map(JSONValue.string)))
        payload.add("id", .string(event.id))
        payload.add("kind", .string(event.kind.rawValue))
        payload.add("lat", event.position.map { .number($0.lat) } ?? .null)
        payload.add("lon", event.position.map { .number($0.lon) } ?? .null)
        payload.add("region", .string(event.regionID))
        payload.add("source", .string("geofence"))
        payload.add("time", .string(time))
        payload.add("visit_id", .string(event.visitID))
        try enqueue(entity: "event", id: event.id, version: 1, payload: payload.text, now: now, db: db)
        return true
    }

    /// Applies an open or close to the visits table; returns whether anything changed.
    static func apply(_ change: VisitChange, now: String, db: Database) throws -> Bool {
        switch change {
        case .none:
            return false
        case .open(let visit):
            let enteredAt = Timestamp.format(seconds: visit.enteredAt)
            try db.cachedStatement(sql: """
                INSERT OR IGNORE INTO visits (id, device, region, entered_ms, entered_at, status, version, updated_at)
                VALUES (?, ?, ?, ?, ?, 'open', 1, ?)
                """).execute(arguments: [
                    visit.id, visit.device, visit.regionID, Timestamp.milliseconds(visit.enteredAt), enteredAt, now,
                ])
            guard db.changesCount > 0 else { return false }
            let row = VisitRow(
                id: visit.id, device: visit.device, region: visit.regionID, enteredMs: Timestamp.milliseconds(visit.enteredAt),
                enteredAt: enteredAt, exitedMs: nil, exitedAt: nil, status: "open", exitReason: nil, version: 1)
            try enqueue(entity: "visit", id: visit.id, version: 1, payload: row.jsonText, now: now, db: db)
            return true
        case .close(let id, let at, let reason):
            let statement = try db.cachedStatement(sql: """
                UPDATE visits SET exited_ms = ?, exited_at = ?, status = 'closed', exit_reason = ?,
                    version = version + 1, updated_at = ?
                WHERE id = ? AND status = 'open'
                RETURNING *
                """)
            let arguments: StatementArguments = [Timestamp.milliseconds(at), Timestamp.format(seconds: at), reason.rawValue, now, id]
            guard let updated = try Row.fetchOne(statement, arguments: arguments).map(VisitRow.init) else { return false }
            try enqueue(entity: "visit", id: id, version: updated.version, payload: updated.jsonText, now: now, db: db)
            return true
        }
    }

    /// Adds a mutation to the outbox; `payload` is the entity as canonical JSON. The key
    /// defaults to `entity:id:vN`, the same on every machine for the same version.
    static func enqueue(
        entity: String, id: String, op: SyncOperation = .upsert, version: Int, key: String? = nil, payload: String, now: String,
        db: Database
    ) throws {
        let statement = try db.cachedStatement(sql: """
            INSERT OR IGNORE INTO outbox (entity, entity_id, op, version, idempotency_key, payload, created_at)
            VALUES (?, ?, ?, ?, ?, ?, ?)
            """)
        statement.setUncheckedArguments([entity, id, op.rawValue, version, key ?? "\(entity):\(id):v\(version)", payload, now])
        try statement.execute()
    }

    // MARK: - Closing visits of retired regions

    /// Closes the open visits of a removed or changed region, at the device's last fix time,
    /// and forgets the devices' memberships (pending enters too) so the next fix re-evaluates.
    static func closeOpenVisits(regionID: String, reason: RegionRetirementReason, now: String, db: Database) throws {
        // Every device in or entering the region has it among its memberships: read those
        // states once, forget the membership, and keep the anchors for closing the visits.
        var anchors: [String: Double] = [:]
        let rows = try Row.fetchAll(db, sql: "SELECT device, state FROM devices WHERE state LIKE ?", arguments: ["%\"\(regionID)\"%"])
        for row in rows {
            let device: String = row["device"]
            let text: String = row["state"]
            var state = try decodeDeviceState(text)
            if let anchor = state.anchor { anchors[device] = anchor }
            guard state.monitor.memberships[regionID] != nil else { continue }  // the id matched elsewhere
            state.monitor.memberships[regionID] = nil
            try save(device: device, state: state, now: now, db: db)
        }
        let visitReason: VisitExitReason = reason == .regionRemoved ? .regionRemoved : .regionChanged
        // Only visits of devices this store monitors itself: a visit that arrived by sync is
        // closed by the store that monitors its device, and arrives closed.
        let open = try Row.fetchAll(db, sql: """
            SELECT * FROM visits WHERE region = ? AND status = 'open' AND device IN (SELECT device FROM devices)
            """, arguments: [regionID]).map(VisitRow.init)
        for visit in open {
            let at = max(anchors[visit.device] ?? visit.enteredMs.seconds, visit.enteredMs.seconds)
            _ = try apply(.close(visitID: visit.id, at: at, reason: visitReason), now: now, db: db)
        }
    }

    // MARK: - Device state

    static func deviceState(_ device: String, db: Database) throws -> DeviceState? {
        try deviceStateText(device, db: db).map(decodeDeviceState)
    }

    /// The device's state as stored (JSON text), nil for a device never seen.
    static func deviceStateText(_ device: String, db: Database) throws -> String? {
        try String.fetchOne(db.cachedStatement(sql: "SELECT state FROM devices WHERE device = ?"), arguments: [device])
    }

    static func decodeDeviceState(_ text: String) throws -> DeviceState {
        try JSONDecoder().decode(DeviceState.self, from: Data(text.utf8))
    }

    /// Saves the device's state; returns the text stored.
    @discardableResult
    static func save(device: String, state: DeviceState, now: String, db: Database) throws -> String {
        let text = state.storedText
        try db.cachedStatement(sql: """
            INSERT INTO devices (device, anchor_ms, state, updated_at) VALUES (?, ?, ?, ?)
            ON CONFLICT(device) DO UPDATE SET anchor_ms = excluded.anchor_ms, state = excluded.state, updated_at = excluded.updated_at
            """).execute(arguments: [device, state.anchor.map(Timestamp.milliseconds), text, now])
        return text
    }
}

extension Int64 {
    var seconds: Double { Double(self) / 1000 }
}
