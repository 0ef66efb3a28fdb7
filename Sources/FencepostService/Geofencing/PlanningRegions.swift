import FencepostCore
import FencepostStore
import Foundation

/// The regions and roster phones' monitored sets are planned from, with each region's circle,
/// kept while the store's regions revision (bumped by every region or roster change) stays
/// the same: a plan costs one small read, not a load of every region.
actor PlanningRegions {
    private let store: Store
    private var cached: (revision: Int64, regions: [Region], roster: DeviceRoster, circles: [String: OSCircle])?

    init(store: Store) {
        self.store = store
    }

    /// The candidates for `device` now (``MonitoredSetPlanner/candidates(_:device:roster:at:circle:)``).
    func candidates(for device: String, at time: Double = Date().timeIntervalSince1970) async throws
        -> [MonitoredSetPlanner.Candidate]
    {
        let revision = try await store.regionsRevision()
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
