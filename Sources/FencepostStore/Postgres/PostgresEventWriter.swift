import FencepostCore
import FencepostGeometry

/// PostgreSQL's fast path for an ingest's writes (``EventWriting``): a batch of events takes a
/// handful of statements, each writing many rows at once (one round trip for a batch's events,
/// one for its visits, one for its outbox rows) instead of a statement per row. Each column
/// of those rows is bound as one array and unnested by the server (``PostgresColumns``): a bind
/// per column, not per value, so the server has a short statement to parse and plan, not a
/// `VALUES` list of thousands of parameters.
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
            var columns = PostgresColumns()
            columns.append(chunk.map(\.id))
            columns.append(chunk.map(\.kind.rawValue))
            columns.append(chunk.map(\.device))
            columns.append(chunk.map(\.regionID))
            columns.append(chunk.map(\.visitID))
            columns.append(chunk.map { Timestamp.milliseconds($0.time) })
            columns.append(chunk.map { Timestamp.format(seconds: $0.time) })
            columns.append(chunk.map { $0.position?.lat })
            columns.append(chunk.map { $0.position?.lon })
            columns.append(chunk.map { $0.flags.names.joined(separator: ",") })
            columns.append(chunk.map(\.propertiesText))
            columns.append(now)
            for row in try await transaction.rows(
                """
                INSERT INTO events (id, kind, source, device, region, visit_id, time_ms, time, lat, lon, flags, version, created_at,
                    properties)
                SELECT id, kind, 'geofence', device, region, visit_id, time_ms, time, lat, lon, flags, 1, $12, properties
                FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[], $7::text[],
                    $8::float8[], $9::float8[], $10::text[], $11::text[])
                    AS r (id, kind, device, region, visit_id, time_ms, time, lat, lon, flags, properties)
                ON CONFLICT (id) DO NOTHING RETURNING id
                """,
                columns)
            {
                inserted.insert(row["id"])
            }
        }
        return inserted
    }

    /// Inserts the visits the enters open that are not stored yet: closed (version 2) when
    /// `exits` holds their exit. Returns, per visit inserted, whether it was inserted closed.
    private func insertVisits(_ enters: [GeofenceEvent], exits: [String: GeofenceEvent]) async throws -> [String: Bool]
    {
        var inserted: [String: Bool] = [:]
        for chunk in Self.chunks(enters) {
            let exitsOfChunk = chunk.map { exits[$0.visitID] }
            var columns = PostgresColumns()
            columns.append(chunk.map(\.visitID))
            columns.append(chunk.map(\.device))
            columns.append(chunk.map(\.regionID))
            columns.append(chunk.map { Timestamp.milliseconds($0.time) })
            columns.append(chunk.map { Timestamp.format(seconds: $0.time) })
            columns.append(exitsOfChunk.map { $0.map { Timestamp.milliseconds($0.time) } })
            columns.append(exitsOfChunk.map { $0.map { Timestamp.format(seconds: $0.time) } })
            columns.append(exitsOfChunk.map { $0.map { VisitExitReason(closing: $0).rawValue } })
            columns.append(now)
            for row in try await transaction.rows(
                """
                INSERT INTO visits (id, device, region, entered_ms, entered_at, exited_ms, exited_at, status, exit_reason, version,
                    updated_at)
                SELECT id, device, region, entered_ms, entered_at, exited_ms, exited_at,
                    CASE WHEN exited_ms IS NULL THEN 'open' ELSE 'closed' END, exit_reason,
                    CASE WHEN exited_ms IS NULL THEN 1 ELSE 2 END, $9
                FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::text[], $6::bigint[], $7::text[], $8::text[])
                    AS r (id, device, region, entered_ms, entered_at, exited_ms, exited_at, exit_reason)
                ON CONFLICT (id) DO NOTHING RETURNING id, status
                """,
                columns)
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
            var columns = PostgresColumns()
            columns.append(chunk.map(\.id))
            columns.append(chunk.map { Timestamp.milliseconds($0.at) })
            columns.append(chunk.map { Timestamp.format(seconds: $0.at) })
            columns.append(chunk.map(\.reason.rawValue))
            columns.append(now)
            for row in try await transaction.rows(
                """
                UPDATE visits AS v SET exited_ms = c.exited_ms, exited_at = c.exited_at, status = 'closed',
                    exit_reason = c.reason, version = v.version + 1, updated_at = $5
                FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[]) AS c (id, exited_ms, exited_at, reason)
                WHERE v.id = c.id AND v.status = 'open'
                RETURNING v.id, v.version
                """,
                columns)
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
}
