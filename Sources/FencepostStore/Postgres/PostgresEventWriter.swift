import FencepostCore
import FencepostGeometry

/// PostgreSQL's fast path for an ingest's writes (``EventWriting``): a batch of events takes a
/// handful of statements, each writing many rows at once (one round trip for a batch's events,
/// one for its visits, one for its outbox rows) instead of a statement per row.
///
/// The outcome is the SQLite writer's, row for row: a new event and each visit change with
/// its outbox row, in the batch's order; a visit the batch both opens and closes written once,
/// closed; a repeated event or visit (a re-run) ignored.
struct PostgresEventWriter: EventWriting {
    let now: String
    let transaction: PostgresTransaction
    private static let rowsPerStatement = PostgresTransaction.rowsPerStatement

    func write(_ events: [GeofenceEvent]) async throws -> WrittenEvents {
        var written = WrittenEvents()
        for event in events { written.eventsByKind[event.kind, default: 0] += 1 }
        let newEvents = try await insertEvents(events)
        written.newEvents = events.filter { newEvents.contains($0.id) }

        // Visits: opened (closed at once when the batch also holds the exit), then the
        // closes of visits opened before this batch.
        var exits: [String: GeofenceEvent] = [:]
        for event in events where event.kind == .exit { exits[event.visitID] = event }
        let opens = events.filter { $0.kind == .enter }
        let opened = try await insertVisits(opens, exits: exits)
        let closes = events.filter { $0.kind == .exit && !(opened[$0.visitID] == true) }
        let closedVersions = try await closeVisits(closes.map { ($0.visitID, $0.time, VisitExitReason(closing: $0)) })

        // The outbox rows, in the order the events came.
        var rows: [(entity: SyncEntity, id: String, version: Int)] = []
        for event in events {
            if newEvents.contains(event.id) { rows.append((.event, event.id, 1)) }
            switch event.kind {
            case .enter:
                guard opened[event.visitID] != nil else { break }
                rows.append((.visit, event.visitID, 1))
                written.visitsOpened += 1
            case .exit:
                if opened[event.visitID] == true {
                    rows.append((.visit, event.visitID, 2))
                } else if let version = closedVersions[event.visitID] {
                    rows.append((.visit, event.visitID, version))
                } else {
                    break
                }
                written.visitsClosed += 1
            case .dwell, .overstay, .absent, .overspeed:
                break
            }
        }
        try await enqueue(rows)
        return written
    }

    func keep(_ runs: [FixRun]) async throws -> Int {
        try await PostgresFixChunks(transaction: transaction).keep(runs)
    }

    func close(visitID: String, at: Double, reason: VisitExitReason) async throws -> Bool {
        guard let version = try await closeVisits([(visitID, at, reason)])[visitID] else { return false }
        try await enqueue([(.visit, visitID, version)])
        return true
    }

    // MARK: - Statements

    /// Inserts the events that are not stored yet; returns their ids.
    private func insertEvents(_ events: [GeofenceEvent]) async throws -> Set<String> {
        var inserted = Set<String>()
        for chunk in Self.chunks(events) {
            var values: [SQLValue] = []
            values.reserveCapacity(chunk.count * 12)
            for event in chunk {
                values += [
                    .text(event.id), .text(event.kind.rawValue), .text(event.device), .text(event.regionID),
                    .text(event.visitID),
                    .integer(Timestamp.milliseconds(event.time)), .text(Timestamp.format(seconds: event.time)),
                    event.position.map { .double($0.lat) } ?? .null, event.position.map { .double($0.lon) } ?? .null,
                    .text(event.flags.names.joined(separator: ",")), .text(now), .text(event.propertiesText),
                ]
            }
            let rows = Self.placeholders(
                rows: chunk.count, columns: 12, template: "(?, ?, 'geofence', ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?)")
            inserted.formUnion(
                try await transaction.values(
                    """
                    INSERT INTO events (id, kind, source, device, region, visit_id, time_ms, time, lat, lon, flags, version, created_at,
                        properties)
                    VALUES \(rows) ON CONFLICT (id) DO NOTHING RETURNING id
                    """,
                    values) as [String])
        }
        return inserted
    }

    /// Inserts the visits the enters open that are not stored yet: closed (version 2) when
    /// `exits` holds their exit. Returns, per visit inserted, whether it was inserted closed.
    private func insertVisits(_ enters: [GeofenceEvent], exits: [String: GeofenceEvent]) async throws -> [String: Bool]
    {
        var inserted: [String: Bool] = [:]
        for chunk in Self.chunks(enters) {
            var values: [SQLValue] = []
            for enter in chunk {
                let exit = exits[enter.visitID]?.time
                let reason = exits[enter.visitID].map(VisitExitReason.init(closing:))
                values += [
                    .text(enter.visitID), .text(enter.device), .text(enter.regionID),
                    .integer(Timestamp.milliseconds(enter.time)),
                    .text(Timestamp.format(seconds: enter.time)),
                    exit.map { .integer(Timestamp.milliseconds($0)) } ?? .null,
                    exit.map { .text(Timestamp.format(seconds: $0)) } ?? .null, .text(exit == nil ? "open" : "closed"),
                    reason.map { .text($0.rawValue) } ?? .null, .integer(exit == nil ? 1 : 2),
                    .text(now),
                ]
            }
            let rows = Self.placeholders(rows: chunk.count, columns: 11, template: "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
            for row in try await transaction.rows(
                """
                INSERT INTO visits (id, device, region, entered_ms, entered_at, exited_ms, exited_at, status, exit_reason, version,
                    updated_at)
                VALUES \(rows) ON CONFLICT (id) DO NOTHING RETURNING id, status
                """,
                values)
            {
                inserted[row["id"]] = (row["status"] as String) == "closed"
            }
        }
        return inserted
    }

    /// Closes the open visits among `closes`; returns each closed visit's new version.
    private func closeVisits(_ closes: [(id: String, at: Double, reason: VisitExitReason)]) async throws -> [String:
        Int]
    {
        var versions: [String: Int] = [:]
        for chunk in Self.chunks(closes) {
            var values: [SQLValue] = [.text(now)]
            for close in chunk {
                values += [
                    .text(close.id), .integer(Timestamp.milliseconds(close.at)),
                    .text(Timestamp.format(seconds: close.at)),
                    .text(close.reason.rawValue),
                ]
            }
            let rows = Self.placeholders(
                rows: chunk.count, columns: 4, template: "(?::text, ?::bigint, ?::text, ?::text)")
            for row in try await transaction.rows(
                """
                UPDATE visits AS v SET exited_ms = c.exited_ms, exited_at = c.exited_at, status = 'closed',
                    exit_reason = c.reason, version = v.version + 1, updated_at = ?
                FROM (VALUES \(rows)) AS c (id, exited_ms, exited_at, reason)
                WHERE v.id = c.id AND v.status = 'open'
                RETURNING v.id, v.version
                """,
                values)
            {
                versions[row["id"]] = row["version"]
            }
        }
        return versions
    }

    /// Outbox rows that refer to their entity (``OutboxPayload``), in order.
    private func enqueue(_ rows: [(entity: SyncEntity, id: String, version: Int)]) async throws {
        for row in rows {
            try await transaction.enqueue(
                OutboxRow(entity: row.entity, id: row.id, version: row.version, createdAt: now))
        }
    }

    private static func chunks<Element>(_ elements: [Element]) -> [ArraySlice<Element>] {
        stride(from: 0, to: elements.count, by: rowsPerStatement).map {
            elements[$0..<min($0 + rowsPerStatement, elements.count)]
        }
    }

    /// `template` (one row's `(?, ...)`) repeated for `rows` rows.
    private static func placeholders(rows: Int, columns: Int, template: String) -> String {
        Array(repeating: template, count: rows).joined(separator: ", ")
    }
}
