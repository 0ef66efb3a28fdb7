public import FencepostCore
public import Foundation

/// What `scan` writes: events or visits, in one of the export formats.
public struct ScanOutput: Sendable {
    public enum Content: Sendable { case events, visits }

    public var content: Content
    /// csv, jsonl or geojson (ics is the store's: it needs the devices' last fixes).
    public var format: ExportFormat
    /// Adds local times to csv and jsonl events.
    public var zone: TimeZone?

    public init(content: Content = .events, format: ExportFormat = .csv, zone: TimeZone? = nil) {
        precondition(format != .ics, "scan writes csv, jsonl or geojson")
        self.content = content
        self.format = format
        self.zone = zone
    }
}

/// The monitor's events and visits for trace inputs, with no store: the same filter, time order
/// and monitor as an ingest into a fresh store, so the same events and visits with the same ids,
/// written as the store's exports would list them (events by time, then id; visits by enter
/// time, then id).
///
/// Fixes stream; events and visits wait in a ``SortedSpool`` (in memory, past its limit in
/// temporary files) and are written once every input has been read: an exit is often confirmed
/// long after the time it carries, and a later input may hold earlier times. Like an ingest, an
/// input that turns out malformed counts for nothing (its events, and the devices' progress
/// through it, are forgotten); the other inputs still count. Not thread-safe.
public final class TraceScan {
    private let monitor: Monitor
    private let filter: FixFilterSettings
    private let output: ScanOutput
    private let regions: [String: Region]
    private var state = State()
    /// Puts each input's fixes in time order per device.
    private var order = FixOrder()
    private let events = SortedSpool()
    private let visits = SortedSpool()
    private var input = 0

    /// What the scan remembers between fixes and inputs. A value the per-fix path works on
    /// through a local variable: no exclusivity checks at run time, and an input that fails is
    /// undone by keeping the value it started from.
    private struct State {
        var summary = IngestSummary()
        var devices: [String: DeviceProgress] = [:]
        /// The device of the fixes coming now, kept out of `devices` while it is.
        var current: (device: String, progress: DeviceProgress)?
        /// Devices seen in the current input: their anchor at its start decides what is already seen.
        var seenInInput: Set<String> = []
        var openVisits: [String: VisitRow] = [:]
        var emitted: [MonitorEvent] = []
    }

    public init(regions: [Region], monitor settings: MonitorSettings, filter: FixFilterSettings, output: ScanOutput) throws {
        self.monitor = try Monitor(regions: regions, settings: settings)
        self.filter = filter
        self.output = output
        self.regions = Dictionary(regions.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
    }

    public var regionCount: Int { monitor.regionCount }

    public var summary: IngestSummary { state.summary }

    /// Scans one input: `read` hands each fix to `add`. If `read` throws (a malformed file),
    /// nothing of the input counts and the error is rethrown.
    public func scan(_ read: (_ add: (Fix) throws -> Void) throws -> Void) throws {
        input += 1
        var state = self.state
        var order = self.order
        defer { self.order = order }
        state.seenInInput.removeAll(keepingCapacity: true)
        do {
            try read { fix in
                state.summary.fixesRead += 1
                try order.add(fix) { try process($0, &state) }
            }
            try order.finish { try process($0, &state) }
        } catch {
            events.discard(input: input)
            visits.discard(input: input)
            order.reset()
            throw error
        }
        self.state = state
    }

    /// Records readers' skipped-record counts.
    public func addSkipped(_ skipped: [String: Int]) {
        state.summary.skipped.merge(skipped, uniquingKeysWith: +)
    }

    /// Writes what the inputs gave, in order: visits still open at the end are written open.
    public func finish(to sink: inout some TextSink) throws {
        input += 1  // the open visits belong to no input that may have been refused
        for visit in state.openVisits.values { try add(visit) }
        state.openVisits.removeAll()
        switch (output.format, output.content) {
        case (.geojson, _):
            var features = GeoJSONExport()
            try sink.write(GeoJSONExport.header)
            if output.content == .events { try events.drain { try sink.write(features.feature(text: $0)) } }
            try visits.drain { try sink.write(features.feature(text: $0)) }
            try sink.write(GeoJSONExport.footer)
        case (_, .events):
            if output.format == .csv { try sink.write(EventExport.csvHeader(zone: output.zone)) }
            try events.drain { try sink.write($0) }
        case (_, .visits):
            if output.format == .csv { try sink.write(VisitExport.csvHeader) }
            try visits.drain { try sink.write($0) }
        }
    }

    // MARK: - Processing

    private func process(_ fix: Fix, _ state: inout State) throws {
        if state.current?.device != fix.device { switchDevice(to: fix.device, &state) }
        let reason = try monitor.take(fix, device: &state.current!.progress, filter: filter) { state.emitted.append($0) }
        guard let reason else {
            state.summary.fixesAccepted += 1
            if !state.emitted.isEmpty { try record(&state) }
            return
        }
        state.summary.dropped[reason, default: 0] += 1
    }

    private func switchDevice(to device: String, _ state: inout State) {
        if let current = state.current { state.devices[current.device] = current.progress }
        var progress = state.devices.removeValue(forKey: device) ?? DeviceProgress(monitor: monitor)
        if state.seenInInput.insert(device).inserted {
            progress.anchorAtStart = progress.anchor
            state.summary.devices.insert(device)
        }
        state.current = (device, progress)
    }

    /// Counts and keeps the events of one fix, and what they do to the visits (the visit
    /// tracker's rule: an enter opens its visit, an exit closes it).
    private func record(_ state: inout State) throws {
        for monitorEvent in state.emitted {
            let event = GeofenceEvent(monitorEvent)
            state.summary.events[event.kind, default: 0] += 1
            if output.content == .events { try add(EventRow(event)) }
            switch VisitChange(for: event) {
            case .open(let visit):
                guard state.openVisits[visit.id] == nil else { continue }
                state.openVisits[visit.id] = VisitRow(opened: visit)
                state.summary.visitsOpened += 1
            case .close(let id, let at, let reason):
                guard let open = state.openVisits.removeValue(forKey: id) else { continue }
                state.summary.visitsClosed += 1
                try add(open.closed(at: at, reason: reason))
            case .none:
                break
            }
        }
        state.emitted.removeAll(keepingCapacity: true)
    }

    private func add(_ event: EventRow) throws {
        let text: String
        switch output.format {
        case .csv: text = EventExport.csvLine(event, zone: output.zone)
        case .jsonl: text = EventExport.jsonLine(event, zone: output.zone)
        default: text = GeoJSONExport.feature(event).canonicalText()
        }
        try events.add(SortedSpool.Record(milliseconds: event.timeMs, id: event.id, input: input, text: text))
    }

    private func add(_ visit: VisitRow) throws {
        guard output.content == .visits || output.format == .geojson else { return }
        let text: String
        switch output.format {
        case .csv: text = VisitExport.csvLine(visit)
        case .jsonl: text = VisitExport.jsonLine(visit)
        default: text = GeoJSONExport.feature(visit, region: regions[visit.region]).canonicalText()
        }
        try visits.add(SortedSpool.Record(milliseconds: visit.enteredMs, id: visit.id, input: input, text: text))
    }
}
