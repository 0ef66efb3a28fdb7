package import FencepostCore
package import Foundation

extension EventExport {
    /// Writes every event (or, for ics, visit) `query` selects from `source`, in `format`;
    /// `zone` adds local times to csv and jsonl. geojson has the events, then (without a kind
    /// filter) the visits with their regions' shapes.
    package static func write(
        _ format: ExportFormat, query: EventQuery, zone: TimeZone?, from source: some EventReading,
        to sink: inout some TextSink
    ) async throws {
        switch format {
        case .csv:
            try sink.write(csvHeader(zone: zone))
            try await source.forEachEvent(query) { event in try sink.write(csvLine(event, zone: zone)) }
        case .jsonl:
            try await source.forEachEvent(query) { event in try sink.write(jsonLine(event, zone: zone)) }
        case .geojson:
            var features = GeoJSONExport()
            try sink.write(GeoJSONExport.header)
            try await source.forEachEvent(query) { event in
                try sink.write(features.feature(GeoJSONExport.feature(event)))
            }
            if query.kind == nil {
                let regions = Dictionary(
                    uniqueKeysWithValues: try await source.regions().map { ($0.id, $0) })
                try await VisitSelection(query).forEach(source) { visit in
                    try sink.write(features.feature(GeoJSONExport.feature(visit, region: regions[visit.region])))
                }
            }
            try sink.write(GeoJSONExport.footer)
        case .ics:
            let names = Dictionary(
                uniqueKeysWithValues: try await source.regions().map { ($0.id, $0.name ?? $0.id) })
            let lastFix = try await source.deviceAnchors()
            try sink.write(ICSExport.text(ICSExport.header))
            try await VisitSelection(query).forEach(source) { visit in
                try sink.write(
                    ICSExport.text(
                        ICSExport.vevent(
                            visit, regionName: names[visit.region] ?? visit.region, lastFix: lastFix[visit.device])))
            }
            try sink.write(ICSExport.text(ICSExport.footer))
        }
    }
}

/// The visits an export's filters select: entered within [since, until), of a device, a region or
/// a roster group.
struct VisitSelection {
    let query: EventQuery

    init(_ query: EventQuery) {
        self.query = query
    }

    func forEach(_ source: some EventReading, _ body: (VisitRow) throws -> Void) async throws {
        let since = query.since.map(Timestamp.milliseconds)
        let until = query.until.map(Timestamp.milliseconds)
        try await source.forEachVisit(
            openOnly: false, device: query.device, region: query.region, group: query.group
        ) { visit in
            if let since, visit.enteredMs < since { return }
            if let until, visit.enteredMs >= until { return }
            try body(visit)
        }
    }
}
