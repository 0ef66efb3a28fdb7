package import FencepostCore

/// One device on the path every fix takes after it is read, from any input (a file, a request,
/// a scan): the fix filter, then the monitor. What the filter and the monitor remember of the
/// device, and its anchor.
package struct DeviceProgress: Sendable {
    package var filter: FilterState
    package var track: MonitorTrack
    /// The time of the last fix processed.
    package var anchor: Double?
    /// The anchor when the current input began: fixes at or before it are already seen.
    package var anchorAtStart: Double?
    /// What the device's fixes did since the caller last took the tally (kept in memory only).
    package var tally = DeviceTally()

    package init(filter: FilterState, track: MonitorTrack, anchor: Double?) {
        self.filter = filter
        self.track = track
        self.anchor = anchor
        self.anchorAtStart = anchor
    }

    /// A device seen for the first time.
    package init(monitor: Monitor, device: String) {
        self.init(filter: FilterState(), track: monitor.track(resuming: MonitorState(), device: device), anchor: nil)
    }
}

extension DeviceProgress {
    /// Filters `fix` and, when it is accepted, monitors it, appending its events to `events`:
    /// returns why it was dropped, or nil once it is processed (the device's anchor moved to
    /// it). Counts the fix and its events in the tally.
    @inline(__always)
    mutating func take(
        _ fix: Fix, monitor: Monitor, filter: FixFilterSettings, into events: inout [MonitorEvent]
    ) throws -> FixDropReason? {
        tally.fixesRead += 1
        let before = events.count
        if let reason = try monitor.filterAndProcess(
            fix, filter: &self.filter, track: &track, anchorAtStart: anchorAtStart, settings: filter, into: &events)
        {
            return reason
        }
        for index in before..<events.count { tally.count(events[index].kind) }
        tally.fixesAccepted += 1
        anchor = fix.time
        return nil
    }
}
