import FencepostCore
import FencepostFormats
import FencepostIngest
import FencepostStore
import Foundation

/// `regions plan --replay TRACE...|SINCE`: the traces, or the stored fixes of every device since
/// a time, run through the monitored set and through the planned one (statelessly, as `scan`
/// does), and, per changed region, the visits the edit would add, remove and change. Visits are
/// held in memory: a replay is a review, not an import.
enum RegionPlanReplay {
    /// What is replayed: trace files, or the store's history from a time on.
    enum Source {
        case traces([String])
        case history(Store, since: Double)

        /// `--replay` values: files that exist are traces; else one time (RFC 3339, or a
        /// duration back from now such as 30d) selects the stored history.
        static func parse(_ values: [String], store: Store) throws -> Source {
            let files = values.filter { FileManager.default.fileExists(atPath: $0) || $0 == "-" }
            if files.count == values.count { return .traces(files) }
            guard values.count == 1, let since = TimeArgument.parse(values[0]) else {
                let odd = values.first { !files.contains($0) } ?? ""
                throw CommandFailure.invalidInput([
                    "error: --replay \(odd): no such trace file, and not a time (RFC 3339, or a duration back from now such as 30d) to replay the stored fixes from"
                ])
            }
            return .history(store, since: since)
        }
    }

    /// One line per changed region: `replay: depot: +3 −1 ~2 visits over 4 devices`.
    static func lines(
        plan: RegionPlan, current: [Region], planned: [Region], roster: DeviceRoster, source: Source
    ) async throws -> [String] {
        let before = try await visits(of: current, roster: roster, source: source)
        let after = try await visits(of: planned, roster: roster, source: source)
        return plan.changes.map { change in
            let region = change.regionID
            let difference = Difference(before: before[region] ?? [], after: after[region] ?? [])
            guard difference.devices > 0 else { return "replay: \(region): no visit changes" }
            return
                "replay: \(region): +\(difference.added) −\(difference.removed) ~\(difference.changed) visits over \(difference.devices) device\(difference.devices == 1 ? "" : "s")"
        }
    }

    /// Every visit the source gives against `regions`, by region.
    static func visits(of regions: [Region], roster: DeviceRoster, source: Source) async throws -> [String:
        [VisitRow]]
    {
        let pipeline = try FixPipeline(regions: regions, roster: roster)
        var tracker = VisitTracker()
        switch source {
        case .traces(let traces):
            for trace in traces {
                var reader = try TraceOpener.open(trace, format: nil, device: nil)
                try pipeline.input({ try reader.next() }, into: &tracker)
            }
        case .history(let store, let since):
            // A device's stored fixes, an hour at a time, in time order: each hour an input.
            for device in try await store.historyDevices() {
                try await store.readTrack(device: device, since: since) { fixes in
                    var next = fixes.makeIterator()
                    try pipeline.input({ next.next() }, into: &tracker)
                }
            }
        }
        return Dictionary(grouping: tracker.closed + tracker.open.values, by: \.region)
    }

    /// The visit tracker's rule over the pipeline's events: an enter opens, an exit closes.
    private struct VisitTracker: FixOutcomes {
        var open: [String: VisitRow] = [:]
        var closed: [VisitRow] = []

        mutating func accepted(_ fix: Fix, events: [MonitorEvent]) {
            for monitorEvent in events {
                switch VisitChange(for: GeofenceEvent(monitorEvent)) {
                case .open(let visit): if open[visit.id] == nil { open[visit.id] = VisitRow(opened: visit) }
                case .close(let id, let at, let reason):
                    if let visit = open.removeValue(forKey: id) { closed.append(visit.closed(at: at, reason: reason)) }
                case .none: break
                }
            }
        }

        mutating func dropped(_ fix: Fix, reason: FixDropReason) {}
    }

    /// One region's visits before and after: per device, a visit after that overlaps one before
    /// in time is the same visit (changed when its times differ); the others are added or removed.
    struct Difference {
        var added = 0
        var removed = 0
        var changed = 0
        /// Devices with any difference.
        var devices = 0

        init(before: [VisitRow], after: [VisitRow]) {
            let devices = Set(before.map(\.device)).union(after.map(\.device))
            for device in devices {
                var old = before.filter { $0.device == device }
                let new = after.filter { $0.device == device }
                var differs = false
                for visit in new {
                    if let match = old.firstIndex(where: { Self.overlap($0, visit) }) {
                        let was = old.remove(at: match)
                        if was.enteredMs != visit.enteredMs || was.exitedMs != visit.exitedMs {
                            changed += 1
                            differs = true
                        }
                    } else {
                        added += 1
                        differs = true
                    }
                }
                removed += old.count
                if differs || !old.isEmpty { self.devices += 1 }
            }
        }

        private static func overlap(_ a: VisitRow, _ b: VisitRow) -> Bool {
            a.enteredMs <= (b.exitedMs ?? .max) && b.enteredMs <= (a.exitedMs ?? .max)
        }
    }
}
