public import FencepostCore

/// Everything Fencepost remembers of a device between inputs, stored as JSON in `devices`.
public struct DeviceState: Sendable, Hashable, Codable {
    /// The time of the last fix processed: fixes at or before it are already seen.
    public var anchor: Double?
    public var filter: FilterState
    public var monitor: MonitorState

    public init(anchor: Double? = nil, filter: FilterState = FilterState(), monitor: MonitorState = MonitorState()) {
        self.anchor = anchor
        self.filter = filter
        self.monitor = monitor
    }
}

extension DeviceState {
    /// The state as stored in `devices.state`: the JSON its `Codable` conformance reads back
    /// (keys are the property names, absent optionals left out, flags as their raw value),
    /// written without `JSONEncoder`, which took a fifth of the live writer's time.
    var storedText: String {
        object([
            ("anchor", anchor.map(JSONValue.number)),
            ("filter", object([("lastAccepted", filter.lastAccepted.map(Self.json))])),
            ("monitor", object([
                ("lastFix", monitor.lastFix.map(Self.json)),
                ("memberships", .object(monitor.memberships.mapValues(Self.json))),
            ])),
        ]).canonicalText()
    }

    private static func json(_ point: FixPoint) -> JSONValue {
        object([("time", .number(point.time)), ("lat", .number(point.lat)), ("lon", .number(point.lon)), ("accuracy", point.accuracy.map(JSONValue.number))])
    }

    private static func json(_ membership: Membership) -> JSONValue {
        object([
            ("phase", .string(membership.phase.rawValue)), ("enter", json(membership.enter)), ("outward", membership.outward.map(json)),
            ("armed", .bool(membership.armed)), ("dwellEmitted", .bool(membership.dwellEmitted)),
        ])
    }

    private static func json(_ crossing: Crossing) -> JSONValue {
        object([
            ("time", .number(crossing.time)), ("flags", .number(Double(crossing.flags.rawValue))),
            ("position", crossing.position.map { object([("lon", .number($0.lon)), ("lat", .number($0.lat))]) }),
        ])
    }
}

/// An object of the members that have a value.
private func object(_ members: [(String, JSONValue?)]) -> JSONValue {
    var present: [String: JSONValue] = [:]
    for case let (key, value?) in members { present[key] = value }
    return .object(present)
}
