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

/// An event as stored.
public struct EventRow: Sendable, Hashable {
    public var id: String
    public var kind: String
    public var source: String
    public var device: String
    public var region: String?
    public var visitID: String?
    public var timeMs: Int64
    public var time: String
    public var flags: [String]
    public var lat: Double?
    public var lon: Double?
    /// The event's properties as JSON text (`{}` for geofence events).
    public var properties: String

    init(row: Row) {
        id = row["id"]
        kind = row["kind"]
        source = row["source"]
        device = row["device"]
        region = row["region"]
        visitID = row["visit_id"]
        timeMs = row["time_ms"]
        time = row["time"]
        lat = row["lat"]
        lon = row["lon"]
        properties = row["properties"]
        let flagText: String = row["flags"]
        flags = flagText.isEmpty ? [] : flagText.split(separator: ",").map(String.init)
    }
}

extension Store {
    /// Calls `body` for each matching event in time order, reading in one snapshot without
    /// holding them all in memory.
    public func forEachEvent(_ query: EventQuery, _ body: (EventRow) throws -> Void) throws {
        var conditions: [String] = []
        var arguments: StatementArguments = []
        if let since = query.since { conditions.append("time_ms >= ?"); _ = arguments.append(contentsOf: [Timestamp.milliseconds(since)]) }
        if let until = query.until { conditions.append("time_ms < ?"); _ = arguments.append(contentsOf: [Timestamp.milliseconds(until)]) }
        if let device = query.device { conditions.append("device = ?"); _ = arguments.append(contentsOf: [device]) }
        if let region = query.region { conditions.append("region = ?"); _ = arguments.append(contentsOf: [region]) }
        if let kind = query.kind { conditions.append("kind = ?"); _ = arguments.append(contentsOf: [kind]) }
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
        var counts = ["pending": 0, "inflight": 0, "delivered": 0, "dead": 0]
        try writer.read { db in
            for row in try Row.fetchAll(db, sql: "SELECT status, COUNT(*) AS n FROM outbox GROUP BY status") {
                counts[row["status"]] = row["n"]
            }
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
