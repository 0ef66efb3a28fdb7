package import FencepostCore

/// What an ingest (or a scan) did: fixes read, accepted and dropped, events and visits, in
/// total and per device.
package struct IngestSummary: Sendable, Hashable {
    package var fixesRead = 0
    package var fixesAccepted = 0
    package var dropped: [FixDropReason: Int] = [:]
    package var skipped: [String: Int] = [:]
    package var events: [EventKind: Int] = [:]
    package var visitsOpened = 0
    package var visitsClosed = 0
    /// Accepted fixes stored in the history (``FixHistory``).
    package var fixesKept = 0
    package var devices: Set<String> = []
    /// Each device's fixes and events (a fleet file holds many devices).
    package var byDevice: [String: DeviceTally] = [:]

    package init() {}

    /// Counts what a device's fixes did in one input.
    package mutating func add(_ tally: DeviceTally, device: String) {
        byDevice[device, default: DeviceTally()].add(tally)
    }
}

/// What one device's fixes did: counted as the filter and the monitor take them
/// (``Monitor/take(_:device:filter:emit:)``).
package struct DeviceTally: Sendable, Hashable {
    /// Fixes the filter saw (accepted or dropped).
    package var fixesRead = 0
    package var fixesAccepted = 0
    package var enters = 0
    package var exits = 0
    package var dwells = 0
    /// Events of the kinds regions' rules give (`overstay`, `absent`, ...), by kind.
    package var ruled: [EventKind: Int] = [:]

    package init() {}

    /// The events by kind (kinds with none left out).
    package var events: [EventKind: Int] {
        var events = ruled
        for (kind, count) in [(EventKind.enter, enters), (.exit, exits), (.dwell, dwells)] where count > 0 {
            events[kind] = count
        }
        return events
    }

    package var eventCount: Int { enters + exits + dwells + ruled.values.reduce(0, +) }

    @inline(__always)
    mutating func count(_ kind: EventKind) {
        switch kind {
        case .enter: enters += 1
        case .exit: exits += 1
        case .dwell: dwells += 1
        case .overstay, .absent, .overspeed: ruled[kind, default: 0] += 1
        }
    }

    package mutating func add(_ other: DeviceTally) {
        fixesRead += other.fixesRead
        fixesAccepted += other.fixesAccepted
        enters += other.enters
        exits += other.exits
        dwells += other.dwells
        ruled.merge(other.ruled, uniquingKeysWith: +)
    }
}
