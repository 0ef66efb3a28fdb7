package import FencepostCore
import FencepostGeometry
import Foundation

/// Why reported transitions were refused, whole: nothing of them is written.
package enum TransitionRefusal: Error, Equatable, CustomStringConvertible {
    /// The region is not monitored (no region has that id).
    case unknownRegion(index: Int, region: String)
    /// The region is monitored but does not apply to the device (its selectors, the roster).
    case notInAudience(index: Int, region: String, device: String)
    /// The region is disabled (`"enabled": false`): the server watches it for no one.
    case disabledRegion(index: Int, region: String)

    package var description: String {
        switch self {
        case .unknownRegion(let index, let region):
            return "transition \(index): no monitored region has the id \(region); nothing of this request was written"
        case .notInAudience(let index, let region, let device):
            return
                "transition \(index): the region \(region) does not apply to the device \(device) (its devices/groups selectors); nothing of this request was written"
        case .disabledRegion(let index, let region):
            return "transition \(index): the region \(region) is disabled; nothing of this request was written"
        }
    }
}

extension Store {
    /// Writes transitions the devices reported, in one transaction: each an event flagged
    /// `device` (a report already stored changes nothing), then the visits of each device and
    /// region merged again with the server's (``StayMerge``), every change with its outbox row.
    /// A transition for a region that is unknown, disabled or not the device's refuses them all.
    /// Returns the events of the request as stored, in its order, each in its merged visit.
    package func write(_ transitions: [DeviceTransition], window: Double = StayMerge.defaultWindow) async throws
        -> [EventRow]
    {
        guard !transitions.isEmpty else { return [] }
        return try await write { tx in
            try await Self.checkRegions(of: transitions, tx: tx)
            let devices = Set(transitions.map(\.device)).sorted()
            try await tx.dialect.lock(devices.map { "device:" + $0 }, in: tx)
            let now = Timestamp.format(Date())
            var fresh: Set<String> = []
            var pairs: Set<DeviceRegion> = []
            for transition in transitions {
                let event = GeofenceEvent(transition)
                if try await Self.insert(event, now: now, tx: tx) { fresh.insert(event.id) }
                pairs.insert(DeviceRegion(device: transition.device, region: transition.regionID))
            }
            for pair in pairs.sorted(by: { ($0.device, $0.region) < ($1.device, $1.region) }) {
                try await tx.execute(
                    "INSERT INTO device_reported_regions (device, region) VALUES (?, ?) ON CONFLICT DO NOTHING",
                    pair.device, pair.region)
                try await Self.mergeStays(
                    device: pair.device, region: pair.region, fresh: fresh, window: window, now: now, tx: tx)
            }
            let ids = transitions.map { GeofenceEvent($0).id }
            var byID: [String: EventRow] = [:]
            try await tx.forEachRow("SELECT \(eventColumns()) FROM events WHERE id IN", in: Set(ids)) { row in
                let event = EventRow(row: row)
                byID[event.id] = event
            }
            return ids.compactMap { byID[$0] }
        }
    }

    /// Refuses the transitions if any names a region that is not monitored, is disabled, or
    /// does not apply to its device.
    private static func checkRegions(of transitions: [DeviceTransition], tx: any SQLTransaction) async throws {
        let parser = RegionConfigParser()
        var regions: [String: Region] = [:]
        try await tx.forEachRow("SELECT id, feature FROM regions WHERE id IN", in: Set(transitions.map(\.regionID))) {
            row in
            let id: String = row["id"]
            do {
                regions[id] = try parser.region(
                    fromFeature: Data((row["feature"] as String).utf8), source: "stored region \(id)")
            } catch let error as RegionConfigError {
                throw StoreError.corruptRegion(id: id, issues: error.issues.map(\.description))
            }
        }
        let roster = try await roster(tx)
        for (index, transition) in transitions.enumerated() {
            guard let region = regions[transition.regionID] else {
                throw TransitionRefusal.unknownRegion(index: index, region: transition.regionID)
            }
            guard region.settings.enabled else {
                throw TransitionRefusal.disabledRegion(index: index, region: region.id)
            }
            guard roster.applies(region, to: transition.device) else {
                throw TransitionRefusal.notInAudience(index: index, region: region.id, device: transition.device)
            }
        }
    }

    /// Inserts a reported event unless it is stored; returns whether it was new. Its outbox
    /// row is written once its visit is merged.
    private static func insert(_ event: GeofenceEvent, now: String, tx: any SQLTransaction) async throws -> Bool {
        try await tx.execute(
            """
            INSERT INTO events (id, kind, source, device, region, visit_id, time_ms, time, lat, lon, flags, version, created_at,
                properties)
            VALUES (?, ?, 'geofence', ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, '{}')
            ON CONFLICT DO NOTHING
            """, event.id, event.kind.rawValue, event.device, event.regionID, event.visitID,
            Timestamp.milliseconds(event.time), Timestamp.format(seconds: event.time), event.position?.lat,
            event.position?.lon, event.flags.names.joined(separator: ","), now) > 0
    }
}

/// A device and a region: the unit the stay merge works on.
struct DeviceRegion: Hashable {
    var device: String
    var region: String
}
