package import FencepostCore
package import FencepostFormats
package import Foundation

/// What `scan` writes: events or visits, in one of the export formats.
package struct ScanOutput: Sendable {
    package enum Content: Sendable { case events, visits, stops, trips }

    package var content: Content
    /// csv, jsonl or geojson (ics is the store's: it needs the devices' last fixes; stops are
    /// the exception).
    package var format: ExportFormat
    /// Adds local times to csv and jsonl events.
    package var zone: TimeZone?
    /// How stops and trips are found, for those contents.
    package var movement: MovementSettings

    package init(
        content: Content = .events, format: ExportFormat = .csv, zone: TimeZone? = nil,
        movement: MovementSettings = MovementSettings()
    ) {
        precondition(format != .ics || content == .stops, "scan writes csv, jsonl or geojson (and ics for stops)")
        self.content = content
        self.format = format
        self.zone = zone
        self.movement = movement
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
package final class TraceScan {
    private let pipeline: FixPipeline
    private var tally: Tally
    private var input = 0

    package init(
        regions: [Region], roster: DeviceRoster = DeviceRoster(), monitor settings: MonitorSettings,
        filter: FixFilterSettings, output: ScanOutput
    ) throws {
        self.pipeline = try FixPipeline(regions: regions, roster: roster, monitor: settings, filter: filter)
        self.tally = Tally(
            output: output, regions: Dictionary(regions.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first }))
    }

    package var regionCount: Int { pipeline.regionCount }

    package var summary: IngestSummary { tally.summary }

    /// Scans one input: `next` gives its fixes, nil at the end. If `next` throws (a malformed
    /// file), nothing of the input counts and the error is rethrown.
    package func scan(_ next: () throws -> Fix?) throws {
        input += 1
        // Worked on as a local value and kept only if the input succeeds.
        var tally = self.tally
        tally.input = input
        do {
            let read = try pipeline.input(next, into: &tally)
            tally.summary.fixesRead += read.fixes
            tally.summary.devices.formUnion(read.devices)
            for (device, counts) in read.byDevice { tally.summary.add(counts, device: device) }
        } catch {
            tally.events.discard(input: input)
            tally.visits.discard(input: input)
            throw error
        }
        self.tally = tally
    }

    /// Records readers' skipped-record counts.
    package func addSkipped(_ skipped: [String: Int]) {
        tally.summary.skipped.merge(skipped, uniquingKeysWith: +)
    }

    /// Writes what the inputs gave, in order: visits still open at the end are written open.
    package func finish(to sink: inout some TextSink) throws {
        try tally.finish(to: &sink, input: input + 1)  // the open visits belong to no input that may have been refused
    }

    /// The counts, the open visits and the text kept for writing.
    private struct Tally: FixOutcomes {
        let output: ScanOutput
        let regions: [String: Region]
        var summary = IngestSummary()
        var openVisits: [String: VisitRow] = [:]
        var movements: [String: MovementTracker] = [:]
        let events = SortedSpool()
        let visits = SortedSpool()
        /// The input the outcomes come from.
        var input = 0

        init(output: ScanOutput, regions: [String: Region]) {
            self.output = output
            self.regions = regions
        }

        mutating func dropped(_ fix: Fix, reason: FixDropReason) {
            summary.dropped[reason, default: 0] += 1
        }

        /// Counts and keeps the events of one fix, and what they do to the visits (the visit
        /// tracker's rule: an enter opens its visit, an exit closes it).
        mutating func accepted(_ fix: Fix, events new: [MonitorEvent]) throws {
            summary.fixesAccepted += 1
            if output.content == .stops || output.content == .trips { return try moved(fix) }
            for monitorEvent in new {
                let event = GeofenceEvent(monitorEvent)
                summary.events[event.kind, default: 0] += 1
                if output.content == .events { try add(EventRow(event)) }
                switch VisitChange(for: event) {
                case .open(let visit):
                    guard openVisits[visit.id] == nil else { continue }
                    openVisits[visit.id] = VisitRow(opened: visit)
                    summary.visitsOpened += 1
                case .close(let id, let at, let reason):
                    guard let open = openVisits.removeValue(forKey: id) else { continue }
                    summary.visitsClosed += 1
                    try add(open.closed(at: at, reason: reason))
                case .none:
                    break
                }
            }
        }

        /// Feeds the device's movement tracker; what it completes waits in `events`.
        private mutating func moved(_ fix: Fix) throws {
            var tracker = movements.removeValue(forKey: fix.device) ?? MovementTracker(device: fix.device)
            for change in tracker.add(FixPoint(fix), settings: output.movement) {
                switch change {
                case .stopClosed(let stop): try add(stop)
                case .trip(let trip): try add(trip)
                case .stopOpened: break
                }
            }
            movements[fix.device] = tracker
        }

        mutating func finish(to sink: inout some TextSink, input: Int) throws {
            self.input = input
            for visit in openVisits.values { try add(visit) }
            openVisits.removeAll()
            for tracker in movements.values { if let stop = tracker.openStop { try add(stop) } }
            movements.removeAll()
            switch (output.format, output.content) {
            case (.ics, _):
                try sink.write(ICSExport.text(ICSExport.header))
                try events.drain { try sink.write($0) }
                try sink.write(ICSExport.text(ICSExport.footer))
            case (.geojson, .stops), (.geojson, .trips):
                var features = GeoJSONExport()
                try sink.write(GeoJSONExport.header)
                try events.drain { try sink.write(features.feature(text: $0)) }
                try sink.write(GeoJSONExport.footer)
            case (_, .stops):
                if output.format == .csv { try sink.write(MovementExport.stopCSVHeader) }
                try events.drain { try sink.write($0) }
            case (_, .trips):
                if output.format == .csv { try sink.write(MovementExport.tripCSVHeader) }
                try events.drain { try sink.write($0) }
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

        private func add(_ stop: Stop) throws {
            guard output.content == .stops else { return }
            let text: String
            switch output.format {
            case .csv: text = MovementExport.csvLine(stop)
            case .jsonl: text = MovementExport.jsonLine(stop)
            case .geojson: text = MovementExport.feature(stop).canonicalText()
            case .ics: text = ICSExport.text(MovementExport.vevent(stop))
            }
            try events.add(
                SortedSpool.Record(
                    milliseconds: Timestamp.milliseconds(stop.start), id: stop.id, input: input, text: text))
        }

        private func add(_ trip: Trip) throws {
            guard output.content == .trips else { return }
            let text: String
            switch output.format {
            case .csv: text = MovementExport.csvLine(trip)
            case .jsonl: text = MovementExport.jsonLine(trip)
            default: text = MovementExport.feature(trip).canonicalText()
            }
            try events.add(
                SortedSpool.Record(
                    milliseconds: Timestamp.milliseconds(trip.start), id: trip.id, input: input, text: text))
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
}
