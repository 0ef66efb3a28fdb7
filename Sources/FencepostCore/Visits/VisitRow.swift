/// A visit as stored and exported, with its times as text and milliseconds.
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

    public init(
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

    public var isOpen: Bool { status == "open" }

    /// The visit's fields as JSON, in key order.
    private var fields: [(String, JSONValue)] {
        [
            ("device", .string(device)), ("entered_at", .string(enteredAt)),
            ("exit_reason", exitReason.map(JSONValue.string) ?? .null),
            ("exited_at", exitedAt.map(JSONValue.string) ?? .null),
            ("id", .string(id)), ("region", .string(region)), ("status", .string(status)),
            ("version", .number(Double(version))),
        ]
    }

    /// A visit the tracker just opened, as a read would return it.
    public init(opened visit: Visit) {
        let enteredMs = Timestamp.milliseconds(visit.enteredAt)
        self.init(
            id: visit.id, device: visit.device, region: visit.regionID, enteredMs: enteredMs,
            enteredAt: Timestamp.format(milliseconds: enteredMs), exitedMs: nil, exitedAt: nil, status: "open",
            exitReason: nil,
            version: 1)
    }

    /// The same visit closed at `at` for `reason`: the tracker's next version of it.
    public func closed(at seconds: Double, reason: VisitExitReason) -> VisitRow {
        var row = self
        let milliseconds = Timestamp.milliseconds(seconds)
        row.exitedMs = milliseconds
        row.exitedAt = Timestamp.format(milliseconds: milliseconds)
        row.status = "closed"
        row.exitReason = reason.rawValue
        row.version += 1
        return row
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
