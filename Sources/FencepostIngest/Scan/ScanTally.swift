import FencepostCore
import FencepostFormats
import Foundation

/// What a ``TraceScan`` keeps of its inputs: the counts, the open visits and the text kept for
/// writing. Takes every fix itself for stops and trips (each fix moves a device's movement
/// tracker); for events and visits, only the monitor's events count, and they may come from
/// another thread (``ScanEventThread``).
struct ScanTally: FixOutcomes {
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
        if takesFixes { return try moved(fix) }
        try take(new)
    }

    /// Whether every fix counts (stops and trips), not only the events.
    var takesFixes: Bool { output.content == .stops || output.content == .trips }

    /// Counts and keeps events of accepted fixes, in the order the monitor emitted them.
    mutating func take(_ new: [MonitorEvent]) throws {
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
