/// Which events to read.
public struct EventQuery: Sendable {
    public var since: Double?
    public var until: Double?
    public var device: String?
    public var region: String?
    public var kind: String?

    public init(
        since: Double? = nil, until: Double? = nil, device: String? = nil, region: String? = nil, kind: String? = nil
    ) {
        self.since = since
        self.until = until
        self.device = device
        self.region = region
        self.kind = kind
    }
}
