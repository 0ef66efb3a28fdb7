/// Which events to read.
public struct EventQuery: Sendable {
    public var since: Double?
    public var until: Double?
    public var device: String?
    public var region: String?
    public var kind: String?
    /// Only the devices of this roster group (its members when the query runs): what a group
    /// tenant reads.
    public var group: String?

    public init(
        since: Double? = nil, until: Double? = nil, device: String? = nil, region: String? = nil, kind: String? = nil,
        group: String? = nil
    ) {
        self.since = since
        self.until = until
        self.device = device
        self.region = region
        self.kind = kind
        self.group = group
    }
}

extension EventQuery {
    /// Every kind an event can have, geofence events first: a filter on another kind is a typo
    /// (it would select nothing, silently).
    public static let knownKinds: [String] =
        EventKind.allCases.map(\.rawValue) + HealthEventKind.allCases.map(\.rawValue)

    /// Why `kind` is no kind an event can have, or nil.
    public static func kindProblem(_ kind: String) -> String? {
        knownKinds.contains(kind)
            ? nil : "no event has the kind \"\(kind)\"; kinds: \(knownKinds.joined(separator: ", "))"
    }
}
