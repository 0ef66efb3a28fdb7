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
    package init(monitor: Monitor) {
        self.init(filter: FilterState(), track: monitor.track(resuming: MonitorState()), anchor: nil)
    }
}

extension Monitor {
    /// Filters `fix` and, when it is accepted, monitors it: returns why it was dropped, or nil
    /// once it is processed (its events emitted, the device's anchor moved to it). Counts the
    /// fix and its events in the device's tally.
    @inline(__always)
    package func take(
        _ fix: Fix, device: inout DeviceProgress, filter: FixFilterSettings, emit: (MonitorEvent) -> Void
    ) throws -> FixDropReason? {
        device.tally.fixesRead += 1
        if let reason = FixFilter.check(
            fix, state: &device.filter, anchorAtStart: device.anchorAtStart, settings: filter)
        {
            return reason
        }
        var tally = device.tally
        try process(fix, track: &device.track) { event in
            tally.count(event.kind)
            emit(event)
        }
        tally.fixesAccepted += 1
        device.tally = tally
        device.anchor = fix.time
        return nil
    }
}
