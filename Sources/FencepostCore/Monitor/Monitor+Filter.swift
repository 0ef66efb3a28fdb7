extension Monitor {
    /// One fix's way through the core: the filter, then, when the filter accepts it, the
    /// monitor, its events appended to `events`. Returns why the fix was dropped, or nil once
    /// it is processed. Pure, as the filter and the monitor are. Taking an array rather than a
    /// closure keeps the whole step in this module, where the monitor is specialised for it: it
    /// runs for every fix of every input.
    @inline(__always)
    public func filterAndProcess(
        _ fix: Fix, filter state: inout FilterState, track: inout MonitorTrack, anchorAtStart: Double?,
        settings: FixFilterSettings, into events: inout [MonitorEvent]
    ) throws -> FixDropReason? {
        if let reason = FixFilter.check(fix, state: &state, anchorAtStart: anchorAtStart, settings: settings) {
            return reason
        }
        try process(fix, track: &track) { events.append($0) }
        return nil
    }
}
