import FencepostCore
import FencepostStore
import Foundation

/// The regions and roster phones' monitored sets are planned from, with each region's circle,
/// kept while the store's regions revision (bumped by every region or roster change) stays
/// the same: a plan costs one small read, not a load of every region. The revision itself is
/// read at most once a second, so a change reaches the plans within a second.
actor PlanningRegions {
    private let store: Store
    private var cached: (revision: Int64, regions: [Region], roster: DeviceRoster, circles: [String: OSCircle])?
    private var revisionRead: (revision: Int64, at: ContinuousClock.Instant)?

    init(store: Store) {
        self.store = store
    }

    /// The store's regions revision, as read within the last second.
    func revision() async throws -> Int64 {
        if let revisionRead, ContinuousClock.now - revisionRead.at < .seconds(1) { return revisionRead.revision }
        let revision = try await store.regionsRevision()
        revisionRead = (revision, .now)
        return revision
    }

    /// The candidates for `device` now (``MonitoredSetPlanner/candidates(_:device:roster:at:circle:)``).
    func candidates(for device: String, at time: Double = Date().timeIntervalSince1970) async throws
        -> [MonitoredSetPlanner.Candidate]
    {
        let revision = try await self.revision()
        if cached?.revision != revision {
            let (regions, roster, read) = try await store.monitoredRegionsAndRevision()
            let circles = Dictionary(
                regions.map { ($0.id, OSCircle($0.shape)) }, uniquingKeysWith: { first, _ in first })
            cached = (read, regions, roster, circles)
        }
        let (_, regions, roster, circles) = cached!
        return MonitoredSetPlanner.candidates(regions, device: device, roster: roster, at: time) {
            circles[$0.id] ?? OSCircle($0.shape)
        }
    }
}
