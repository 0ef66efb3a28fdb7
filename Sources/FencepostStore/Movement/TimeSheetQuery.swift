package import FencepostCore
package import Foundation

/// The store's visits and, unless the sheet is for one region or tag, its trips (each device's
/// distance and time moving) added up into a ``TimeSheet``.
package struct TimeSheetQuery: Sendable {
    package var period: SummaryPeriod
    package var zone: TimeZone
    package var window: Range<Double>
    package var device: String?
    package var group: String?
    package var region: String?
    package var tag: String?

    package init(
        period: SummaryPeriod, zone: TimeZone, window: Range<Double>, device: String? = nil, group: String? = nil,
        region: String? = nil, tag: String? = nil
    ) {
        self.period = period
        self.zone = zone
        self.window = window
        self.device = device
        self.group = group
        self.region = region
        self.tag = tag
    }

    /// The rows, and the names of the regions they name (for a table).
    package func rows(from store: Store) async throws -> (rows: [TimeSheet.Row], names: [String: String]) {
        var sheet = TimeSheet(period: period, zone: zone, window: window)
        let regions = try await store.monitoredRegions().map(\.region)
        let names = Dictionary(
            regions.compactMap { region in region.name.map { (region.id, $0) } }, uniquingKeysWith: { a, _ in a })
        let tagged = tag.map { tag in Set(regions.filter { $0.tags.contains(tag) }.map(\.id)) }
        var lastFixes: [String: Double] = [:]
        var openVisits: [VisitRow] = []
        let milliseconds = Self.milliseconds(window)
        try await store.forEachVisit(device: device, region: region, group: group, overlapping: milliseconds) { visit in
            if let tagged, !tagged.contains(visit.region) { return }
            guard let exited = visit.exitedMs else {
                openVisits.append(visit)
                return
            }
            sheet.addVisit(
                device: visit.device, subject: tag ?? visit.region, start: Double(visit.enteredMs) / 1000,
                end: Double(exited) / 1000)
        }
        for visit in openVisits {
            if lastFixes[visit.device] == nil {
                lastFixes[visit.device] = try await store.deviceState(visit.device)?.monitor.lastFix?.time
            }
            let start = Double(visit.enteredMs) / 1000
            sheet.addVisit(
                device: visit.device, subject: tag ?? visit.region, start: start,
                end: max(start, lastFixes[visit.device] ?? start))
        }
        if region == nil, tag == nil {
            // Each device's movement: its trips, brought up to date from its stored fixes.
            try await store.updateMovement(of: device)
            let query = MovementQuery(
                device: device, group: group, since: window.lowerBound.isFinite ? window.lowerBound : nil,
                until: window.upperBound.isFinite ? window.upperBound : nil)
            try await store.forEachTrip(query) { trip in
                sheet.addTrip(device: trip.device, start: trip.start, end: trip.end, distance: trip.distance)
            }
        }
        return (sheet.finished(), names)
    }

    package static func milliseconds(_ window: Range<Double>) -> Range<Int64> {
        func clamp(_ seconds: Double) -> Int64 {
            seconds.isFinite ? Timestamp.milliseconds(seconds) : (seconds < 0 ? Int64.min : Int64.max)
        }
        return clamp(window.lowerBound)..<clamp(window.upperBound)
    }
}
