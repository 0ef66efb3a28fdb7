public import FencepostCore
import GRDB

/// Which events to read.
public struct EventQuery: Sendable {
    public var since: Double?
    public var until: Double?
    public var device: String?
    public var region: String?
    public var kind: String?

    public init(since: Double? = nil, until: Double? = nil, device: String? = nil, region: String? = nil, kind: String? = nil) {
        self.since = since
        self.until = until
        self.device = device
        self.region = region
        self.kind = kind
    }
}

extension EventRow {
    init(row: Row) {
        let flags: String = row["flags"]
        self.init(
            id: row["id"], kind: row["kind"], source: row["source"], device: row["device"], region: row["region"],
            visitID: row["visit_id"], timeMs: row["time_ms"], time: row["time"],
            flags: flags.isEmpty ? [] : flags.split(separator: ",").map(String.init), lat: row["lat"], lon: row["lon"],
            properties: row["properties"])
    }
}

extension VisitRow {
    init(row: Row) {
        self.init(
            id: row["id"], device: row["device"], region: row["region"], enteredMs: row["entered_ms"], enteredAt: row["entered_at"],
            exitedMs: row["exited_ms"], exitedAt: row["exited_at"], status: row["status"], exitReason: row["exit_reason"],
            version: row["version"])
    }

    /// From `RETURNING id, device, region, entered_ms, entered_at, exited_ms, exited_at, status,
    /// exit_reason, version` (the columns' NOT NULL constraints hold for the non-optionals).
    init(returned columns: DirectStatement.Columns) {
        self.init(
            id: columns.text(0) ?? "", device: columns.text(1) ?? "", region: columns.text(2) ?? "",
            enteredMs: columns.int64(3) ?? 0, enteredAt: columns.text(4) ?? "", exitedMs: columns.int64(5),
            exitedAt: columns.text(6), status: columns.text(7) ?? "", exitReason: columns.text(8),
            version: Int(columns.int64(9) ?? 0))
    }
}

extension Store {
    /// Calls `body` for each matching event in time order, reading in one snapshot without
    /// holding them all in memory.
    public func forEachEvent(_ query: EventQuery, _ body: (EventRow) throws -> Void) throws {
        let (conditions, arguments) = Self.conditions(query)
        let filter = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
        try writer.read { db in
            let rows = try Row.fetchCursor(db, sql: "SELECT * FROM events \(filter) ORDER BY time_ms, id", arguments: arguments)
            while let row = try rows.next() { try body(EventRow(row: row)) }
        }
    }

    /// Calls `body` for each matching visit in enter-time order.
    public func forEachVisit(openOnly: Bool = false, device: String? = nil, region: String? = nil, _ body: (VisitRow) throws -> Void) throws {
        var conditions: [String] = []
        var arguments: StatementArguments = []
        if openOnly { conditions.append("status = 'open'") }
        if let device { conditions.append("device = ?"); _ = arguments.append(contentsOf: [device]) }
        if let region { conditions.append("region = ?"); _ = arguments.append(contentsOf: [region]) }
        let filter = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
        try writer.read { db in
            let rows = try Row.fetchCursor(db, sql: "SELECT * FROM visits \(filter) ORDER BY entered_ms, id", arguments: arguments)
            while let row = try rows.next() { try body(VisitRow(row: row)) }
        }
    }

    /// Outbox rows by status (`pending`, `inflight`, `delivered`, `dead`), zeros included.
    public func outboxCounts() throws -> [String: Int] {
        try writer.read(Self.outboxCounts)
    }

    /// The outbox's statuses, in the order a row moves through them.
    public static let outboxStatuses = ["pending", "inflight", "delivered", "dead"]

    static func outboxCounts(_ db: Database) throws -> [String: Int] {
        var counts = Dictionary(uniqueKeysWithValues: outboxStatuses.map { ($0, 0) })
        for row in try Row.fetchAll(db, sql: "SELECT status, COUNT(*) AS n FROM outbox GROUP BY status") {
            counts[row["status"]] = row["n"]
        }
        return counts
    }

    /// Every device's anchor (its last processed fix time), in milliseconds since the epoch.
    public func deviceAnchors() throws -> [String: Int64] {
        try writer.read { db in
            var anchors: [String: Int64] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT device, anchor_ms FROM devices WHERE anchor_ms IS NOT NULL") {
                anchors[row["device"]] = row["anchor_ms"]
            }
            return anchors
        }
    }

    /// The saved state of a device, if it has been seen.
    public func deviceState(_ device: String) throws -> DeviceState? {
        try writer.read { db in try Self.deviceState(device, db: db) }
    }
}

// MARK: - Pages and the live feed

/// Where a page of events ends: the last event's time and id (events are ordered by both).
public struct EventCursor: Sendable, Hashable {
    public var timeMs: Int64
    public var id: String

    public init(timeMs: Int64, id: String) {
        self.timeMs = timeMs
        self.id = id
    }

    /// An opaque token for clients: `<time_ms>~<id>`, URL-safe.
    public var token: String { "\(timeMs)~\(id)" }

    public init?(token: String) {
        guard let split = token.firstIndex(of: "~"), let time = Int64(token[..<split]) else { return nil }
        self.init(timeMs: time, id: String(token[token.index(after: split)...]))
    }
}

/// An event with its place in the outbox: `seq` grows with every created or changed event.
public struct FeedEvent: Sendable, Hashable {
    public var seq: Int64
    public var event: EventRow
}

extension Store {
    /// At most `limit` matching events after `cursor`, in time order.
    public func events(_ query: EventQuery, after cursor: EventCursor?, limit: Int) throws -> [EventRow] {
        var (filter, arguments) = Self.conditions(query)
        if let cursor {
            filter.append("(time_ms > ? OR (time_ms = ? AND id > ?))")
            _ = arguments.append(contentsOf: [cursor.timeMs, cursor.timeMs, cursor.id])
        }
        _ = arguments.append(contentsOf: [limit])
        let clause = filter.isEmpty ? "" : "WHERE " + filter.joined(separator: " AND ")
        return try writer.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM events \(clause) ORDER BY time_ms, id LIMIT ?", arguments: arguments).map(EventRow.init)
        }
    }

    /// Events created or changed after outbox row `seq`, in outbox order: the live stream's
    /// source, which sees other processes' writes too.
    public func eventFeed(after seq: Int64, device: String?, limit: Int) throws -> [FeedEvent] {
        var sql = """
            SELECT o.seq AS feed_seq, e.* FROM outbox o JOIN events e ON e.id = o.entity_id
            WHERE o.entity = 'event' AND o.seq > ?
            """
        var arguments: StatementArguments = [seq]
        if let device { sql += " AND e.device = ?"; _ = arguments.append(contentsOf: [device]) }
        sql += " ORDER BY o.seq LIMIT ?"
        _ = arguments.append(contentsOf: [limit])
        return try writer.read { db in
            try Row.fetchAll(db, sql: sql, arguments: arguments).map { FeedEvent(seq: $0["feed_seq"], event: EventRow(row: $0)) }
        }
    }

    /// The newest outbox row of an event, or 0: where a live stream without `Last-Event-ID` starts.
    public func latestEventSeq() throws -> Int64 {
        try writer.read(Self.latestEventSeq)
    }

    static func latestEventSeq(_ db: Database) throws -> Int64 {
        try Int64.fetchOne(db, sql: "SELECT MAX(seq) FROM outbox WHERE entity = 'event'") ?? 0
    }

    static func conditions(_ query: EventQuery) -> ([String], StatementArguments) {
        var conditions: [String] = []
        var arguments: StatementArguments = []
        if let since = query.since { conditions.append("time_ms >= ?"); _ = arguments.append(contentsOf: [Timestamp.milliseconds(since)]) }
        if let until = query.until { conditions.append("time_ms < ?"); _ = arguments.append(contentsOf: [Timestamp.milliseconds(until)]) }
        if let device = query.device { conditions.append("device = ?"); _ = arguments.append(contentsOf: [device]) }
        if let region = query.region { conditions.append("region = ?"); _ = arguments.append(contentsOf: [region]) }
        if let kind = query.kind { conditions.append("kind = ?"); _ = arguments.append(contentsOf: [kind]) }
        return (conditions, arguments)
    }
}
