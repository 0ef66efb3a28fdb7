/// What an ingest (or a scan) did: fixes read, accepted and dropped, events and visits, in
/// total and per device.
public struct IngestSummary: Sendable, Hashable {
    public var fixesRead = 0
    public var fixesAccepted = 0
    public var dropped: [FixDropReason: Int] = [:]
    public var skipped: [String: Int] = [:]
    public var events: [EventKind: Int] = [:]
    public var visitsOpened = 0
    public var visitsClosed = 0
    public var devices: Set<String> = []
    /// Each device's fixes and events (a fleet file holds many devices).
    public var byDevice: [String: DeviceTally] = [:]

    public init() {}

    /// Counts what a device's fixes did in one input.
    public mutating func add(_ tally: DeviceTally, device: String) {
        byDevice[device, default: DeviceTally()].add(tally)
    }
}

/// What one device's fixes did: counted as the filter and the monitor take them
/// (``Monitor/take(_:device:filter:emit:)``).
public struct DeviceTally: Sendable, Hashable {
    /// Fixes the filter saw (accepted or dropped).
    public var fixesRead = 0
    public var fixesAccepted = 0
    public var enters = 0
    public var exits = 0
    public var dwells = 0

    public init() {}

    /// The events by kind (kinds with none left out).
    public var events: [EventKind: Int] {
        var events: [EventKind: Int] = [:]
        for (kind, count) in [(EventKind.enter, enters), (.exit, exits), (.dwell, dwells)] where count > 0 {
            events[kind] = count
        }
        return events
    }

    public var eventCount: Int { enters + exits + dwells }

    @inline(__always)
    mutating func count(_ kind: EventKind) {
        switch kind {
        case .enter: enters += 1
        case .exit: exits += 1
        case .dwell: dwells += 1
        }
    }

    public mutating func add(_ other: DeviceTally) {
        fixesRead += other.fixesRead
        fixesAccepted += other.fixesAccepted
        enters += other.enters
        exits += other.exits
        dwells += other.dwells
    }
}
