public import FencepostCore
import GRDB

/// A visit as stored, with its times as text and milliseconds.
public struct VisitRow: Sendable, Hashable {
    public var id: String
    public var device: String
    public var region: String
    public var enteredMs: Int64
    public var enteredAt: String
    public var exitedMs: Int64?
    public var exitedAt: String?
    public var status: String
    public var exitReason: String?
    public var version: Int

    init(
        id: String, device: String, region: String, enteredMs: Int64, enteredAt: String, exitedMs: Int64?,
        exitedAt: String?, status: String, exitReason: String?, version: Int
    ) {
        self.id = id
        self.device = device
        self.region = region
        self.enteredMs = enteredMs
        self.enteredAt = enteredAt
        self.exitedMs = exitedMs
        self.exitedAt = exitedAt
        self.status = status
        self.exitReason = exitReason
        self.version = version
    }

    init(row: Row) {
        id = row["id"]
        device = row["device"]
        region = row["region"]
        enteredMs = row["entered_ms"]
        enteredAt = row["entered_at"]
        exitedMs = row["exited_ms"]
        exitedAt = row["exited_at"]
        status = row["status"]
        exitReason = row["exit_reason"]
        version = row["version"]
    }

    /// From `RETURNING id, device, region, entered_ms, entered_at, exited_ms, exited_at, status,
    /// exit_reason, version` (the columns' NOT NULL constraints hold for the non-optionals).
    init(returned columns: DirectStatement.Columns) {
        id = columns.text(0) ?? ""
        device = columns.text(1) ?? ""
        region = columns.text(2) ?? ""
        enteredMs = columns.int64(3) ?? 0
        enteredAt = columns.text(4) ?? ""
        exitedMs = columns.int64(5)
        exitedAt = columns.text(6)
        status = columns.text(7) ?? ""
        exitReason = columns.text(8)
        version = Int(columns.int64(9) ?? 0)
    }

    public var isOpen: Bool { status == "open" }

    /// The visit's fields as JSON, in key order.
    private var fields: [(String, JSONValue)] {
        [
            ("device", .string(device)), ("entered_at", .string(enteredAt)),
            ("exit_reason", exitReason.map(JSONValue.string) ?? .null), ("exited_at", exitedAt.map(JSONValue.string) ?? .null),
            ("id", .string(id)), ("region", .string(region)), ("status", .string(status)),
            ("version", .number(Double(version))),
        ]
    }

    /// The visit as canonical JSON text (the outbox payload), without building a tree.
    public var jsonText: String {
        var object = CanonicalJSONObject()
        for (key, value) in fields { object.add(key, value) }
        return object.text
    }

    /// The visit as JSON, as exports carry it.
    public var json: JSONValue {
        .object(Dictionary(uniqueKeysWithValues: fields))
    }
}
