import FencepostCore
import FencepostGeometry
import Foundation
import GRDB

/// SQLite's fast path for an ingest's writes (``EventWriting``): the statements are looked up
/// once per writer and bound directly (``DirectStatement``), run for every event.
struct SQLiteEventWriter: EventWriting {
    private let now: String
    private let insertEvent: DirectStatement
    private let openVisit: DirectStatement
    private let closeVisit: DirectStatement
    private let insertClosedVisit: DirectStatement
    private let outbox: OutboxWriter
    private let chunks: SQLiteFixChunks

    init(now: String, db: Database) throws {
        self.now = now
        insertEvent = try DirectStatement(
            """
            INSERT OR IGNORE INTO events (id, kind, source, device, region, visit_id, time_ms, time, lat, lon, flags, version, created_at,
                properties)
            VALUES (?1, ?2, 'geofence', ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, 1, ?11, ?12)
            """, db: db)
        openVisit = try DirectStatement(
            """
            INSERT OR IGNORE INTO visits (id, device, region, entered_ms, entered_at, status, version, updated_at)
            VALUES (?1, ?2, ?3, ?4, ?5, 'open', 1, ?6)
            """, db: db)
        closeVisit = try DirectStatement(
            """
            UPDATE visits SET exited_ms = ?1, exited_at = ?2, status = 'closed', exit_reason = ?3,
                version = version + 1, updated_at = ?4
            WHERE id = ?5 AND status = 'open'
            RETURNING version
            """, db: db)
        insertClosedVisit = try DirectStatement(
            """
            INSERT OR IGNORE INTO visits (id, device, region, entered_ms, entered_at, exited_ms, exited_at, status, exit_reason,
                version, updated_at)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 'closed', ?8, 2, ?9)
            """, db: db)
        outbox = try OutboxWriter(now: now, db: db)
        chunks = try SQLiteFixChunks(db: db)
    }

    func keep(_ runs: [FixRun]) async throws -> Int {
        try await FixHistory.append(runs, to: chunks)
    }

    func write(_ events: [GeofenceEvent]) throws -> WrittenEvents {
        var written = WrittenEvents()
        // Visits the batch both opens and closes are written once, closed.
        var exits: [String: GeofenceEvent] = [:]
        for event in events where event.kind == .exit { exits[event.visitID] = event }
        var closedEarly: Set<String> = []
        for event in events {
            if try insert(event) { written.newEvents.append(event) }
            written.eventsByKind[event.kind, default: 0] += 1
            let change = VisitChange(for: event)
            switch change {
            case .open(let visit):
                if let exit = exits[visit.id] {
                    guard try open(visit, closingAt: exit.time, reason: VisitExitReason(closing: exit)) else {
                        continue
                    }
                    closedEarly.insert(visit.id)
                } else {
                    guard try apply(change) else { continue }
                }
                written.visitsOpened += 1
            case .close(let id, _, _):
                if closedEarly.remove(id) != nil {
                    try outbox.enqueue(entity: .visit, id: id, version: 2)
                } else {
                    guard try apply(change) else { continue }
                }
                written.visitsClosed += 1
            case .none:
                break
            }
        }
        return written
    }

    func close(visitID: String, at: Double, reason: VisitExitReason) throws -> Bool {
        try apply(.close(visitID: visitID, at: at, reason: reason))
    }

    /// Inserts an event unless it exists; returns whether it was new (and so enqueued).
    private func insert(_ event: GeofenceEvent) throws -> Bool {
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
        insertEvent.bind(12, event.propertiesText)
        guard try insertEvent.execute() > 0 else { return false }
        try outbox.enqueue(entity: .event, id: event.id, version: 1)
        return true
    }

    /// Opens a visit that a later event of the same batch closes: the visit's row is written
    /// once, closed (version 2), instead of inserted open and then updated; its version 1 goes
    /// to the outbox now and version 2 at its exit, so the outbox is what opening and closing
    /// would give. Returns whether the visit was new.
    private func open(_ visit: Visit, closingAt at: Double, reason: VisitExitReason) throws -> Bool {
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
        try outbox.enqueue(entity: .visit, id: visit.id, version: 1)
        return true
    }

    /// Applies an open or close to the visits table; returns whether anything changed.
    private func apply(_ change: VisitChange) throws -> Bool {
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
            try outbox.enqueue(entity: .visit, id: visit.id, version: 1)
            return true
        case .close(let id, let at, let reason):
            closeVisit.bind(1, Timestamp.milliseconds(at))
            closeVisit.bind(2, Timestamp.format(seconds: at))
            closeVisit.bind(3, reason.rawValue)
            closeVisit.bind(4, now)
            closeVisit.bind(5, id)
            guard let version = try closeVisit.fetchOne({ $0.int64(0) }) ?? nil else { return false }
            try outbox.enqueue(entity: .visit, id: id, version: Int(version))
            return true
        }
    }
}

/// Adds mutations to the outbox, through one bound statement.
private struct OutboxWriter {
    private let now: String
    private let insert: DirectStatement

    init(now: String, db: Database) throws {
        self.now = now
        insert = try DirectStatement(
            """
            INSERT OR IGNORE INTO outbox (entity, entity_id, op, version, idempotency_key, payload, created_at)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
            """, db: db)
    }

    /// `payload` is the entity as canonical JSON text, nil to refer to the entity at `version`
    /// instead (see ``OutboxPayload``): only for geofence events and visits written by the
    /// tracker. `key` nil is the default `entity:id:vN`, the same on every machine.
    func enqueue(
        entity: SyncEntity, id: String, op: SyncOperation = .upsert, version: Int, key: String? = nil,
        payload: String? = nil
    ) throws {
        insert.bind(1, entity.name)
        insert.bind(2, id)
        insert.bind(3, op.rawValue)
        insert.bind(4, Int64(version))
        insert.bind(5, key)
        insert.bind(6, payload)
        insert.bind(7, now)
        try insert.execute()
    }
}

/// ``FixChunkWriting`` through bound statements, as the events' writes.
private struct SQLiteFixChunks: FixChunkWriting {
    private let last: DirectStatement
    private let insert: DirectStatement
    private let update: DirectStatement

    init(db: Database) throws {
        last = try DirectStatement(Self.lastSQL, db: db)
        insert = try DirectStatement(Self.insertSQL, db: db)
        update = try DirectStatement(Self.updateSQL, db: db)
    }

    func lastChunk(device: String, hourMs: Int64) throws -> StoredChunk? {
        last.bind(1, device)
        last.bind(2, hourMs)
        return try last.fetchOne { row in
            StoredChunk(
                number: row.int64(0) ?? 0, firstMs: row.int64(1) ?? 0, lastMs: row.int64(2) ?? 0,
                count: Int(row.int64(3) ?? 0), bytes: row.bytes(4))
        }
    }

    func insert(_ chunk: StoredChunk, device: String, hourMs: Int64) throws {
        insert.bind(1, device)
        insert.bind(2, hourMs)
        insert.bind(3, chunk.number)
        insert.bind(4, chunk.firstMs)
        insert.bind(5, chunk.lastMs)
        insert.bind(6, Int64(chunk.count))
        insert.bind(7, chunk.bytes)
        try insert.execute()
    }

    func update(_ chunk: StoredChunk, device: String, hourMs: Int64) throws {
        update.bind(1, chunk.lastMs)
        update.bind(2, Int64(chunk.count))
        update.bind(3, chunk.bytes)
        update.bind(4, device)
        update.bind(5, hourMs)
        update.bind(6, chunk.number)
        try update.execute()
    }
}
