/// One device on the path every fix takes after it is read, from any input (a file, a request,
/// a scan): the fix filter, then the monitor. What the filter and the monitor remember of the
/// device, and its anchor.
public struct DeviceProgress: Sendable {
    public var filter: FilterState
    public var track: MonitorTrack
    /// The time of the last fix processed.
    public var anchor: Double?
    /// The anchor when the current input began: fixes at or before it are already seen.
    public var anchorAtStart: Double?
    /// What the device's fixes did since the caller last took the tally (kept in memory only).
    public var tally = DeviceTally()

    public init(filter: FilterState, track: MonitorTrack, anchor: Double?) {
        self.filter = filter
        self.track = track
        self.anchor = anchor
        self.anchorAtStart = anchor
    }

    /// A device seen for the first time.
    public init(monitor: Monitor) {
        self.init(filter: FilterState(), track: monitor.track(resuming: MonitorState()), anchor: nil)
    }
}

extension Monitor {
    /// Filters `fix` and, when it is accepted, monitors it: returns why it was dropped, or nil
    /// once it is processed (its events emitted, the device's anchor moved to it). Counts the
    /// fix and its events in the device's tally.
    @inline(__always)
    public func take(
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

    /// The earliest time an event of this device can still carry: every event to come is at or
    /// after it. Pending enters and exits keep their crossing times, a visit waiting for its dwell
    /// its dwell time; anything else is interpolated after the last fix. Nil before any fix.
    public func earliestPendingTime(of track: MonitorTrack) -> Double? {
        guard var earliest = track.lastFix?.time else { return nil }
        for (region, membership) in zip(track.members.regions, track.members.values) {
            switch membership.phase {
            case .entering:
                earliest = min(earliest, membership.enter.time)
            case .inside:
                if let outward = membership.outward { earliest = min(earliest, outward.time) }
                if !membership.dwellEmitted, let dwell = regionSettings[region].dwell {
                    earliest = min(earliest, membership.enter.time + dwell)
                }
            }
        }
        return earliest
    }
}
