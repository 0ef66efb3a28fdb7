import FencepostCore
import FencepostFormats
import FencepostStore
import Foundation
import Synchronization

/// The regions and roster phones' monitored sets are planned from, with each region's circle,
/// kept while the store's regions revision (bumped by every region or roster change) stays
/// the same: a plan costs one small read, not a load of every region. The revision itself is
/// read at most once a second, so a change reaches the plans within a second.
actor PlanningRegions {
    private let store: Store
    private var cached:
        (revision: Int64, regions: [Region], roster: DeviceRoster, prepared: [MonitoredSetPlanner.Candidate])?
    /// The revision as last read, outside the actor: most posts only ask for it, and a hop onto
    /// one actor per post is what 64 connections would queue at.
    private nonisolated let revisionRead = Mutex<(revision: Int64, at: ContinuousClock.Instant)?>(nil)

    init(store: Store) {
        self.store = store
    }

    /// The store's regions revision, as read within the last second.
    nonisolated func revision() async throws -> Int64 {
        if let read = revisionRead.withLock({ $0 }), ContinuousClock.now - read.at < .seconds(1) {
            return read.revision
        }
        let revision = try await store.regionsRevision()
        return revisionRead.withLock { read in
            // Reads that overlap may finish out of order: the revision never goes back.
            read = (max(revision, read?.revision ?? revision), .now)
            return read!.revision
        }
    }

    /// The candidates for `device` now (``MonitoredSetPlanner/candidates(_:device:roster:at:circle:)``).
    func candidates(for device: String, at time: Double = Date().timeIntervalSince1970) async throws
        -> MonitoredSetPlanner.Selection
    {
        let (regions, roster, prepared) = try await current()
        return MonitoredSetPlanner.candidates(regions, prepared: prepared, device: device, roster: roster, at: time)
    }

    /// The geofence budget the roster gives `device` (its own, else its groups'), if any.
    func geofenceBudget(of device: String) async throws -> Int? {
        try await current().roster.geofenceBudget(of: device)
    }

    /// The regions, roster and each region's candidate (its circle) as of the store's
    /// revision, read again when it moved.
    private func current() async throws -> (
        regions: [Region], roster: DeviceRoster, prepared: [MonitoredSetPlanner.Candidate]
    ) {
        let revision = try await self.revision()
        if let cached, cached.revision == revision { return (cached.regions, cached.roster, cached.prepared) }
        let (regions, roster, read) = try await store.monitoredRegionsAndRevision()
        let prepared = regions.map(MonitoredSetPlanner.Candidate.init)
        cached = (read, regions, roster, prepared)
        return (regions, roster, prepared)
    }

    /// What a reported transition's region name stands for.
    enum NamedRegion: Equatable {
        /// A region id (the store checks it is monitored, enabled and the device's).
        case region(String)
        /// The re-plan circle OwnTracks was sent (``OwnTracksWaypoints/replanID``): no region.
        case replan
        /// Nothing monitored goes by that name.
        case unknown(String)
    }

    /// Looks up the region a report names: an id as it is; an OwnTracks waypoint by its `rid`
    /// when a region has that id (the id it was sent as), else its `desc` as an id or as the
    /// one region of that name, else its `wtst` as the `tst` its waypoint was sent with.
    func region(named name: ReportedTransition.RegionName) async throws -> NamedRegion {
        switch name {
        case .id(let id):
            return .region(id)
        case .ownTracks(let rid, let desc, let wtst):
            if rid == OwnTracksWaypoints.replanID { return .replan }
            let regions = try await current().regions
            if let rid, regions.contains(where: { $0.id == rid }) { return .region(rid) }
            if let desc {
                if regions.contains(where: { $0.id == desc }) { return .region(desc) }
                let named = regions.filter { $0.name == desc }
                if named.count == 1 { return .region(named[0].id) }
                if desc == OwnTracksWaypoints.replanDescription { return .replan }
            }
            if let wtst, let region = regions.first(where: { Double(OwnTracksWaypoints.stableTime($0.id)) == wtst }) {
                return .region(region.id)
            }
            // A phone's number may be any JSON number (1e300): shown whole when it is one, else as sent.
            return .unknown(rid ?? desc ?? wtst.map { "wtst \(Int64(exactly: $0).map(String.init) ?? "\($0)")" } ?? "")
        }
    }
}
