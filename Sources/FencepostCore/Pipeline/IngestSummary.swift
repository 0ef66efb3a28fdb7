/// What an ingest (or a scan) did: fixes read, accepted and dropped, events and visits.
public struct IngestSummary: Sendable, Hashable {
    public var fixesRead = 0
    public var fixesAccepted = 0
    public var dropped: [FixDropReason: Int] = [:]
    public var skipped: [String: Int] = [:]
    public var events: [EventKind: Int] = [:]
    public var visitsOpened = 0
    public var visitsClosed = 0
    public var devices: Set<String> = []

    public init() {}
}
