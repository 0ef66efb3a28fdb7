import FencepostCore
import Foundation
import GRDB

/// Writes events, visit changes and their outbox rows in the caller's transaction: every
/// change also goes to the outbox. The statements are looked up once per writer and bound
/// directly (``DirectStatement``): an ingest runs them for every event.
struct EventWriter {
    private let now: String
    private let insertEvent: DirectStatement
    private let openVisit: DirectStatement
    private let closeVisit: DirectStatement
    private let insertClosedVisit: DirectStatement
    private let outbox: OutboxWriter

    init(now: String, db: Database) throws {
        self.now = now
        insertEvent = try DirectStatement("""
            INSERT OR IGNORE INTO events (id, kind, source, device, region, visit_id, time_ms, time, lat, lon, flags, version, created_at)
            VALUES (?1, ?2, 'geofence', ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, 1, ?11)
            """, db: db)
        openVisit = try DirectStatement("""
            INSERT OR IGNORE INTO visits (id, device, region, entered_ms, entered_at, status, version, updated_at)
            VALUES (?1, ?2, ?3, ?4, ?5, 'open', 1, ?6)
            """, db: db)
        closeVisit = try DirectStatement("""
            UPDATE visits SET exited_ms = ?1, exited_at = ?2, status = 'closed', exit_reason = ?3,
                version = version + 1, updated_at = ?4
            WHERE id = ?5 AND status = 'open'
            RETURNING version
            """, db: db)
        insertClosedVisit = try DirectStatement("""
            INSERT OR IGNORE INTO visits (id, device, region, entered_ms, entered_at, exited_ms, exited_at, status, exit_reason,
                version, updated_at)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 'closed', ?8, 2, ?9)
            """, db: db)
        outbox = try OutboxWriter(now: now, db: db)
    }

    /// Inserts an event unless it exists; returns whether it was new (and so enqueued).
    func insert(_ event: GeofenceEvent) throws -> Bool {
        let time = Timestamp.format(seconds: event.time)
        let flags = event.flags.names.joined(separator: ",")
        insertEvent.bind(1, event.id)
        insertEvent.bind(2, event.kind.rawValue)
        insertEvent.bind(3, event.device)
        insertEvent.bind(4, event.regionID)
        insertEvent.bind(5, event.visitID)
        insertEvent.bind(6, Timestamp.milliseconds(event.time))
        insertEvent.bind(7, time)
        insertEvent.bind(8, event.position?.lat)
        insertEvent.bind(9, event.position?.lon)
        insertEvent.bind(10, flags)
        insertEvent.bind(11, now)
        guard try insertEvent.execute() > 0 else { return false }
        try outbox.enqueue(entity: "event", id: event.id, version: 1)
        return true
    }

    /// Opens a visit that a later event of the same batch closes: the visit's row is written
    /// once, closed (version 2), instead of inserted open and then updated; its version 1 goes
    /// to the outbox now, and ``closedEarlier(_:)`` enqueues version 2 at its exit, so the
    /// outbox is what opening and closing would give. Returns whether the visit was new.
    func open(_ visit: Visit, closingAt at: Double, reason: VisitExitReason) throws -> Bool {
        let enteredMs = Timestamp.milliseconds(visit.enteredAt)
        insertClosedVisit.bind(1, visit.id)
        insertClosedVisit.bind(2, visit.device)
        insertClosedVisit.bind(3, visit.regionID)
        insertClosedVisit.bind(4, enteredMs)
        insertClosedVisit.bind(5, Timestamp.format(milliseconds: enteredMs))
        insertClosedVisit.bind(6, Timestamp.milliseconds(at))
        insertClosedVisit.bind(7, Timestamp.format(seconds: at))
        insertClosedVisit.bind(8, reason.rawValue)
        insertClosedVisit.bind(9, now)
        guard try insertClosedVisit.execute() > 0 else { return false }
        try outbox.enqueue(entity: "visit", id: visit.id, version: 1)
        return true
    }

    /// The exit of a visit ``open(_:closingAt:reason:)`` wrote closed: its version 2 to the outbox.
    func closedEarlier(_ visitID: String) throws {
        try outbox.enqueue(entity: "visit", id: visitID, version: 2)
    }

    /// Applies an open or close to the visits table; returns whether anything changed.
    func apply(_ change: VisitChange) throws -> Bool {
        switch change {
        case .none:
            return false
        case .open(let visit):
            let enteredAt = Timestamp.format(seconds: visit.enteredAt)
            let enteredMs = Timestamp.milliseconds(visit.enteredAt)
            openVisit.bind(1, visit.id)
            openVisit.bind(2, visit.device)
            openVisit.bind(3, visit.regionID)
            openVisit.bind(4, enteredMs)
            openVisit.bind(5, enteredAt)
            openVisit.bind(6, now)
            guard try openVisit.execute() > 0 else { return false }
            try outbox.enqueue(entity: "visit", id: visit.id, version: 1)
            return true
        case .close(let id, let at, let reason):
            closeVisit.bind(1, Timestamp.milliseconds(at))
            closeVisit.bind(2, Timestamp.format(seconds: at))
            closeVisit.bind(3, reason.rawValue)
            closeVisit.bind(4, now)
            closeVisit.bind(5, id)
            guard let version = try closeVisit.fetchOne({ $0.int64(0) }) ?? nil else { return false }
            try outbox.enqueue(entity: "visit", id: id, version: Int(version))
            return true
        }
    }
}

/// Adds mutations to the outbox.
struct OutboxWriter {
    private let now: String
    private let insert: DirectStatement

    init(now: String, db: Database) throws {
        self.now = now
        insert = try DirectStatement("""
            INSERT OR IGNORE INTO outbox (entity, entity_id, op, version, idempotency_key, payload, created_at)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
            """, db: db)
    }

    /// `payload` is the entity as canonical JSON text, nil to refer to the entity at `version`
    /// instead (see ``OutboxPayload``): only for geofence events and visits written by the
    /// tracker. `key` nil is the default `entity:id:vN`, the same on every machine.
    func enqueue(entity: String, id: String, op: SyncOperation = .upsert, version: Int, key: String? = nil, payload: String? = nil) throws {
        insert.bind(1, entity)
        insert.bind(2, id)
        insert.bind(3, op.rawValue)
        insert.bind(4, Int64(version))
        insert.bind(5, key)
        insert.bind(6, payload)
        insert.bind(7, now)
        try insert.execute()
    }
}

extension Store {
    /// Adds a mutation to the outbox (see ``OutboxWriter``).
    static func enqueue(
        entity: String, id: String, op: SyncOperation = .upsert, version: Int, key: String? = nil, payload: String, now: String,
        db: Database
    ) throws {
        try OutboxWriter(now: now, db: db).enqueue(entity: entity, id: id, op: op, version: version, key: key, payload: payload)
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
        let writer = try EventWriter(now: now, db: db)
        for visit in open {
            let at = max(anchors[visit.device] ?? visit.enteredMs.seconds, visit.enteredMs.seconds)
            _ = try writer.apply(.close(visitID: visit.id, at: at, reason: visitReason))
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
