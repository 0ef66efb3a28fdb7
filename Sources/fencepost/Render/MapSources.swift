import FencepostCore
import FencepostFormats
import FencepostGeometry
import FencepostIngest
import FencepostRender
import FencepostStore
import Foundation

/// Reading what a picture shows: region configs, trace files run through the filter and the
/// monitor, and the store's events and visits. Rendering itself reads nothing.
enum MapSources {
    /// Regions from config files. A refused config still yields its valid regions, and the
    /// sketch of the refused features with every problem.
    static func regions(paths: [String]) -> (regions: [Region], refused: RefusedConfig?, issues: [String]) {
        let files = RegionConfigLoader.files(paths)
        do {
            return (try RegionConfig.merge(files), nil, [])
        } catch {
            var seen = Set<String>()
            let valid = files.flatMap { $0.regions.map(\.region) }.filter { seen.insert($0.id).inserted }
            var sources: [String: Data] = [:]
            for file in files { sources[file.file] = try? Data(contentsOf: URL(fileURLWithPath: file.file)) }
            return (valid, RefusedConfig.sketch(error, sources: sources), RegionPlanOutput.issueLines(error))
        }
    }

    /// What trace files show: each device's track (accepted fixes, and the dropped ones with
    /// their reasons) and the events the monitor finds against `regions`, in the selection's
    /// window. Every fix goes through the filter and the monitor, also those outside the
    /// window, so state (a visit begun before it) is what ingest would have.
    struct TraceActivity {
        var tracks: [DeviceTrack] = []
        var events: [MapEvent] = []
        var fixes = 0
        var outOfOrder = 0
    }

    static func traces(_ files: [String], regions: [Region], selection: RenderSelection) throws -> TraceActivity {
        let pipeline = try FixPipeline(regions: regions)
        var recorder = ActivityRecorder(selection: selection)
        for file in files {
            var reader = try TraceOpener.open(file, format: nil, device: nil)
            let read = try pipeline.input(
                {
                    while let fix = try reader.next() {
                        if selection.includes(device: fix.device) { return fix }
                    }
                    return nil
                }, into: &recorder)
            recorder.activity.fixes += read.fixes
        }
        var activity = recorder.activity
        activity.tracks = recorder.order.map { recorder.recorders[$0]!.track }
        activity.events.sort { ($0.time, $0.id) < ($1.time, $1.id) }
        return activity
    }

    /// Each device's accepted and dropped fixes and the events in the window, as the pipeline
    /// tells them.
    private struct ActivityRecorder: FixOutcomes {
        let selection: RenderSelection
        var activity = TraceActivity()
        var recorders: [String: TrackRecorder] = [:]
        var order: [String] = []

        init(selection: RenderSelection) {
            self.selection = selection
        }

        private mutating func recorder(_ device: String) {
            guard recorders[device] == nil else { return }
            recorders[device] = TrackRecorder(device: device)
            order.append(device)
        }

        mutating func accepted(_ fix: Fix, events: [MonitorEvent]) {
            guard selection.contains(fix.time) else { return }
            recorder(fix.device)
            recorders[fix.device]!.accept(fix)
            activity.events += events.map { MapEvent(GeofenceEvent($0)) }.filter {
                selection.includes(region: $0.regionID) && selection.contains($0.time)
            }
        }

        mutating func dropped(_ fix: Fix, reason: FixDropReason) {
            guard selection.contains(fix.time) else { return }
            recorder(fix.device)
            if reason == .outOfOrder { activity.outOfOrder += 1 }
            recorders[fix.device]!.drop(fix, reason: reason)
        }
    }

    /// What the store shows: geofence events in the window, open visits, and per device its
    /// stored fixes in the window as a line (``Store/readTrack``); a device with none stored
    /// (`ingest --no-history`, pruned, or all in private regions) gets the line through its
    /// crossings ending at its last known position.
    static func storeActivity(
        _ store: Store, selection: RenderSelection
    ) async throws -> (events: [MapEvent], open: [MapVisit], tracks: [DeviceTrack]) {
        var events: [MapEvent] = []
        let query = EventQuery(since: selection.sinceTime, until: selection.untilTime, device: selection.device)
        try await store.forEachEvent(query) { row in
            guard row.source == "geofence", let region = row.region, selection.includes(region: region) else { return }
            let position = row.lon.flatMap { lon in row.lat.map { Position(lon: lon, lat: $0) } }
            events.append(
                MapEvent(
                    id: row.id, kind: row.kind, device: row.device, regionID: region, visitID: row.visitID,
                    time: Double(row.timeMs) / 1_000, flags: row.flags, position: position))
        }
        var open: [MapVisit] = []
        try await store.forEachVisit(openOnly: true, device: selection.device) { visit in
            guard selection.includes(region: visit.region) else { return }
            open.append(
                MapVisit(
                    id: visit.id, device: visit.device, regionID: visit.region,
                    enteredAt: Double(visit.enteredMs) / 1_000))
        }
        var devices: [String] = []
        let withHistory = selection.device == nil ? try await store.historyDevices() : []
        for device in events.map(\.device) + open.map(\.device) + (selection.device.map { [$0] } ?? []) + withHistory
        where !devices.contains(device) {
            devices.append(device)
        }
        var tracks: [DeviceTrack] = []
        for device in devices {
            if let track = try await storedTrack(device, store: store, selection: selection) {
                tracks.append(track)
                continue
            }
            let crossings = events.filter { $0.device == device && $0.kind != "dwell" }.compactMap { event in
                event.position.map { TrackPoint(lon: $0.lon, lat: $0.lat, time: event.time) }
            }
            var last: TrackPoint?
            if let fix = try await store.deviceState(device)?.monitor.lastFix, selection.contains(fix.time) {
                last = TrackPoint(lon: fix.lon, lat: fix.lat, time: fix.time)
            }
            let points = crossings + (last.map { [$0] } ?? [])
            guard !points.isEmpty else { continue }
            tracks.append(DeviceTrack(device: device, source: .crossings, points: points, last: last ?? points.last))
        }
        return (events, open, tracks)
    }

    /// The device's stored fixes in the window as a track (thinned to the recorder's budget as
    /// they stream); nil when none are stored there.
    private static func storedTrack(_ device: String, store: Store, selection: RenderSelection) async throws
        -> DeviceTrack?
    {
        var recorder = TrackRecorder(device: device)
        var kept = 0
        try await store.readTrack(device: device, since: selection.sinceTime, until: selection.untilTime) { fixes in
            for fix in fixes where selection.contains(fix.time) {
                recorder.accept(fix)
                kept += 1
            }
        }
        return kept > 0 ? recorder.track : nil
    }
}
