import FencepostCore
import FencepostIngest
import FencepostStore
import Foundation

/// `regions apply PATH --backfill SINCE`: after the apply, each device's stored fixes since
/// then replayed through the new set (statelessly from SINCE, as `scan` would), and the changed
/// regions' events and visits in that window rewritten to what the replay gave
/// (``Store/rewriteHistory(device:regions:since:events:visits:memberships:lastFix:at:)``).
enum RegionBackfill {
    static func run(plan: RegionPlan, store: Store, since: Double) async throws -> String {
        let changed = Set(plan.changes.map(\.regionID))
        guard !changed.isEmpty else { return "backfill: no region changed" }
        let regions = try await store.monitoredRegions().map(\.region)
        let roster = try await store.roster()
        var counts = BackfillCounts()
        var devices = 0
        // One monitor for every device (building it prepares every region's geometry); each
        // device's progress in it is its own.
        let pipeline = try FixPipeline(regions: regions, roster: roster)
        for device in try await store.historyDevices() {
            var replay = Replay(regions: changed)
            try await store.readTrack(device: device, since: since) { fixes in
                var next = fixes.makeIterator()
                try pipeline.input({ next.next() }, into: &replay)
            }
            var memberships: [String: Membership] = [:]
            var lastFix: Double?
            if let progress = pipeline.progress(of: device) {
                let state = pipeline.monitor.state(of: progress.track)
                memberships = state.memberships.filter { changed.contains($0.key) }
                lastFix = state.lastFix?.time
            }
            let written = try await store.rewriteHistory(
                device: device, regions: changed, since: since, events: replay.events,
                visits: replay.closed + replay.open.values.sorted { $0.enteredMs < $1.enteredMs },
                memberships: memberships, lastFix: lastFix)
            if written.added + written.removed + written.changed > 0 { devices += 1 }
            counts = counts + written
        }
        return
            "backfill since \(Timestamp.format(seconds: since)): +\(counts.added) −\(counts.removed) ~\(counts.changed) events and visits (\(counts.unchanged) unchanged) over \(devices) device\(devices == 1 ? "" : "s")"
    }

    /// The replay's events in the changed regions, and the visits they make.
    private struct Replay: FixOutcomes {
        let regions: Set<String>
        var events: [EventRow] = []
        var open: [String: VisitRow] = [:]
        var closed: [VisitRow] = []

        init(regions: Set<String>) {
            self.regions = regions
        }

        mutating func accepted(_ fix: Fix, events new: [MonitorEvent]) {
            for monitorEvent in new {
                let event = GeofenceEvent(monitorEvent)
                guard regions.contains(event.regionID) else { continue }
                events.append(EventRow(event))
                switch VisitChange(for: event) {
                case .open(let visit): if open[visit.id] == nil { open[visit.id] = VisitRow(opened: visit) }
                case .close(let id, let at, let reason):
                    if let visit = open.removeValue(forKey: id) { closed.append(visit.closed(at: at, reason: reason)) }
                case .none: break
                }
            }
        }

        mutating func dropped(_ fix: Fix, reason: FixDropReason) {}
    }
}
