package import FencepostCore

extension EventRow {
    init(row: SQLRow) {
        let flags: String = row["flags"]
        self.init(
            id: row["id"], kind: row["kind"], source: row["source"], device: row["device"], region: row["region"],
            visitID: row["visit_id"], timeMs: row["time_ms"], time: row["time"],
            flags: flags.isEmpty ? [] : flags.split(separator: ",").map(String.init), lat: row["lat"], lon: row["lon"],
            properties: row["properties"])
    }
}

extension VisitRow {
    init(row: SQLRow) {
        self.init(
            id: row["id"], device: row["device"], region: row["region"], enteredMs: row["entered_ms"],
            enteredAt: row["entered_at"],
            exitedMs: row["exited_ms"], exitedAt: row["exited_at"], status: row["status"],
            exitReason: row["exit_reason"],
            version: row["version"])
    }
}

/// The columns of an event row (`table.` before each when given), as every reader selects them.
func eventColumns(of table: String? = nil) -> String {
    let names = [
        "id", "kind", "source", "device", "region", "visit_id", "time_ms", "time", "flags", "lat", "lon", "properties",
    ]
    guard let table else { return names.joined(separator: ", ") }
    return names.map { "\(table).\($0)" }.joined(separator: ", ")
}

/// The columns of a visit row.
let visitColumns = "id, device, region, entered_ms, entered_at, exited_ms, exited_at, status, exit_reason, version"

extension Store: EventReading {
    /// The monitored regions (``EventReading``).
    package func regions() async throws -> [Region] {
        try await read { try await Self.regions($0) }
    }

    /// Calls `body` for each matching event in time order, reading in one snapshot without
    /// holding them all in memory.
    package func forEachEvent(_ query: EventQuery, _ body: (EventRow) throws -> Void) async throws {
        try await read { tx in
            let (conditions, arguments) = Self.conditions(query, tx.dialect)
            let filter = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
            try await tx.forEachRow("SELECT \(eventColumns()) FROM events \(filter) ORDER BY time_ms, id", arguments) {
                row in
                try body(EventRow(row: row))
            }
        }
    }

    /// Calls `body` for each matching visit in enter-time order: of `device`, in `region`, of
    /// the devices in roster group `group` (its members as the read runs).
    package func forEachVisit(
        openOnly: Bool = false, device: String? = nil, region: String? = nil, group: String? = nil,
        _ body: (VisitRow) throws -> Void
    ) async throws {
        try await forEachVisit(openOnly: openOnly, device: device, region: region, group: group, overlapping: nil, body)
    }

    /// The same, only the visits that overlap `window` (milliseconds; an open visit reaches on
    /// for ever).
    package func forEachVisit(
        openOnly: Bool = false, device: String? = nil, region: String? = nil, group: String? = nil,
        overlapping window: Range<Int64>?, _ body: (VisitRow) throws -> Void
    ) async throws {
        try await read { tx in
            var conditions: [String] = []
            var arguments: [SQLValue] = []
            if openOnly { conditions.append("status = 'open'") }
            if let window {
                conditions.append("entered_ms < ? AND (exited_ms IS NULL OR exited_ms > ?)")
                arguments.append(.integer(window.upperBound))
                arguments.append(.integer(window.lowerBound))
            }
            if let device {
                conditions.append("device = ?")
                arguments.append(device.sqlValue)
            }
            if let region {
                conditions.append("region = ?")
                arguments.append(region.sqlValue)
            }
            if let group {
                conditions.append("device IN (\(tx.dialect.groupMembers))")
                arguments.append(group.sqlValue)
            }
            let filter = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
            try await tx.forEachRow("SELECT \(visitColumns) FROM visits \(filter) ORDER BY entered_ms, id", arguments) {
                row in
                try body(VisitRow(row: row))
            }
        }
    }

    /// Outbox rows by status, zeros included.
    package func outboxCounts() async throws -> [OutboxStatus: Int] {
        try await read(Self.outboxCounts)
    }

    static func outboxCounts(_ tx: any SQLTransaction) async throws -> [OutboxStatus: Int] {
        var counts = Dictionary(uniqueKeysWithValues: OutboxStatus.allCases.map { ($0, 0) })
        for row in try await tx.rows("SELECT status, COUNT(*) AS n FROM outbox GROUP BY status") {
            // The table's CHECK admits these four only.
            if let status = OutboxStatus(rawValue: row["status"]) { counts[status] = row["n"] }
        }
        return counts
    }

    /// Every device's anchor (its last processed fix time), in milliseconds since the epoch.
    package func deviceAnchors() async throws -> [String: Int64] {
        try await read { tx in
            var anchors: [String: Int64] = [:]
            for row in try await tx.rows("SELECT device, anchor_ms FROM devices WHERE anchor_ms IS NOT NULL") {
                anchors[row["device"]] = row["anchor_ms"]
            }
            return anchors
        }
    }

    /// The saved state of a device, if it has been seen.
    package func deviceState(_ device: String) async throws -> DeviceState? {
        try await read { tx in try await Self.deviceState(device, tx: tx) }
    }
}

// MARK: - Pages and the live feed

/// Where a page of events ends: the last event's time and id (events are ordered by both).
package struct EventCursor: Sendable, Hashable {
    package var timeMs: Int64
    package var id: String

    package init(timeMs: Int64, id: String) {
        self.timeMs = timeMs
        self.id = id
    }

    /// An opaque token for clients: `<time_ms>~<id>`, URL-safe.
    package var token: String { "\(timeMs)~\(id)" }

    package init?(token: String) {
        guard let split = token.firstIndex(of: "~"), let time = Int64(token[..<split]) else { return nil }
        self.init(timeMs: time, id: String(token[token.index(after: split)...]))
    }
}

/// An event with its place in the outbox: `seq` grows with every created or changed event.
package struct FeedEvent: Sendable, Hashable {
    package var seq: Int64
    package var event: EventRow
    /// The outbox row's idempotency key (`event:ID:vN` unless the row names another): the same
    /// on every delivery of this row, different for the event's next version.
    package var idempotencyKey: String
}

extension Store {
    /// At most `limit` matching events after `cursor`, in time order.
    package func events(_ query: EventQuery, after cursor: EventCursor?, limit: Int) async throws -> [EventRow] {
        try await read { tx in
            let (clause, arguments) = Self.page(query, after: cursor, tx.dialect)
            return try await tx.rows(
                "SELECT \(eventColumns()) FROM events \(clause) ORDER BY time_ms, id LIMIT ?",
                arguments + [limit.sqlValue]
            ).map(EventRow.init)
        }
    }

    /// The key of the event `offset` places after `cursor` (0: the next one) among those `query`
    /// selects, or nil when there is none: where a page of a given size ends.
    package func eventCursor(_ query: EventQuery, after cursor: EventCursor?, offset: Int) async throws -> EventCursor?
    {
        try await read { tx in
            let (clause, arguments) = Self.page(query, after: cursor, tx.dialect)
            return try await tx.rows(
                "SELECT time_ms, id FROM events \(clause) ORDER BY time_ms, id LIMIT 1 OFFSET ?",
                arguments + [offset.sqlValue]
            ).first.map { EventCursor(timeMs: $0["time_ms"], id: $0["id"]) }
        }
    }

    /// The `WHERE` clause (and its values) of the events `query` selects after `cursor`.
    private static func page(_ query: EventQuery, after cursor: EventCursor?, _ dialect: any SQLDialect) -> (
        String, [SQLValue]
    ) {
        var (filter, arguments) = conditions(query, dialect)
        if let cursor {
            filter.append("(time_ms > ? OR (time_ms = ? AND id > ?))")
            arguments += [cursor.timeMs.sqlValue, cursor.timeMs.sqlValue, cursor.id.sqlValue]
        }
        return (filter.isEmpty ? "" : "WHERE " + filter.joined(separator: " AND "), arguments)
    }

    /// Events created or changed after outbox row `seq`, in outbox order: the live stream's
    /// source, which sees other processes' writes too (outbox rows commit in `seq` order, see
    /// ``SQLTransaction/enqueue(_:)``, so a cursor never passes a row still to come). Of one
    /// device, or of the devices in roster group `group`, when given.
    package func eventFeed(after seq: Int64, device: String?, group: String? = nil, limit: Int) async throws
        -> [FeedEvent]
    {
        try await read { tx in
            var sql = """
                SELECT o.seq AS feed_seq, o.idempotency_key AS feed_key, o.version AS feed_version,
                \(eventColumns(of: "e"))
                FROM outbox o JOIN events e ON e.id = o.entity_id
                WHERE o.entity = 'event' AND o.seq > ?
                """
            var arguments: [SQLValue] = [seq.sqlValue]
            if let device {
                sql += " AND e.device = ?"
                arguments.append(device.sqlValue)
            }
            if let group {
                sql += " AND e.device IN (\(tx.dialect.groupMembers))"
                arguments.append(group.sqlValue)
            }
            sql += " ORDER BY o.seq LIMIT ?"
            arguments.append(limit.sqlValue)
            return try await tx.rows(sql, arguments).map { row in
                let event = EventRow(row: row)
                let version: Int64 = row["feed_version"]
                return FeedEvent(
                    seq: row["feed_seq"], event: event,
                    idempotencyKey: row["feed_key"] ?? "event:\(event.id):v\(version)")
            }
        }
    }

    /// The newest outbox row of an event, or 0: where a live stream without `Last-Event-ID` starts.
    package func latestEventSeq() async throws -> Int64 {
        try await read(Self.latestEventSeq)
    }

    static func latestEventSeq(_ tx: any SQLTransaction) async throws -> Int64 {
        try await tx.value("SELECT MAX(seq) FROM outbox WHERE entity = 'event'") ?? 0
    }

    static func conditions(_ query: EventQuery, _ dialect: any SQLDialect) -> ([String], [SQLValue]) {
        var conditions: [String] = []
        var arguments: [SQLValue] = []
        if let since = query.since {
            conditions.append("time_ms >= ?")
            arguments.append(Timestamp.milliseconds(since).sqlValue)
        }
        if let until = query.until {
            conditions.append("time_ms < ?")
            arguments.append(Timestamp.milliseconds(until).sqlValue)
        }
        if let device = query.device {
            conditions.append("device = ?")
            arguments.append(device.sqlValue)
        }
        if let region = query.region {
            conditions.append("region = ?")
            arguments.append(region.sqlValue)
        }
        if let kind = query.kind {
            conditions.append("kind = ?")
            arguments.append(kind.sqlValue)
        }
        if let group = query.group {
            conditions.append("device IN (\(dialect.groupMembers))")
            arguments.append(group.sqlValue)
        }
        return (conditions, arguments)
    }
}
