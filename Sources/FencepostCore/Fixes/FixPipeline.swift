/// The fix filter and the monitor for fixes held in memory, with no store: what ingest does to
/// each fix, without the visit writes, the outbox or device anchors. For commands that show or
/// print what a trace would do (`render map --trace`) rather than record it.
///
/// Fixes must come in time order per device, as ingest hands them to the monitor (ingest sorts
/// an unsorted input first; here a fix earlier than its device's previous one is dropped as
/// `out_of_order`). Events carry the ids ingest would give them in a fresh store.
/// Holds GEOS state through the monitor: one pipeline per thread.
public final class FixPipeline {
    /// What became of one fix.
    public enum Outcome: Sendable, Hashable {
        /// Passed the filter; the events it completed, in the order the monitor emitted them.
        case accepted([GeofenceEvent])
        case dropped(FixDropReason)
    }

    private let monitor: Monitor
    private let filterSettings: FixFilterSettings
    private var filters: [String: FilterState] = [:]
    private var tracks: [String: MonitorTrack] = [:]

    public init(regions: [Region], monitor settings: MonitorSettings = MonitorSettings(), filter: FixFilterSettings = FixFilterSettings()) throws {
        self.monitor = try Monitor(regions: regions, settings: settings)
        self.filterSettings = filter
    }

    /// Filters the fix and, when it passes, runs it through the monitor.
    public func process(_ fix: Fix) throws -> Outcome {
        var filter = filters[fix.device] ?? FilterState()
        let reason = FixFilter.check(fix, state: &filter, anchorAtStart: nil, settings: filterSettings)
        filters[fix.device] = filter
        if let reason { return .dropped(reason) }
        var track = tracks.removeValue(forKey: fix.device) ?? monitor.track(resuming: MonitorState())
        var events: [GeofenceEvent] = []
        defer { tracks[fix.device] = track }
        try monitor.process(fix, track: &track) { events.append(GeofenceEvent($0)) }
        return .accepted(events)
    }
}
