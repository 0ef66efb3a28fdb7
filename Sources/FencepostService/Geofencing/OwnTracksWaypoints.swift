import FencepostCore
import FencepostGeometry
import Synchronization

/// OwnTracks geofences on the phone: its app monitors "waypoints" and reports `transition`s.
/// After a location post, the device's monitored set (the roster's budget for the device, else
/// iOS's 20: the app does not say its platform, and 20 fits both) is planned at its newest fix; when it differs from what
/// this instance last sent the device, the answer carries `{"_type": "cmd", "action":
/// "setWaypoints", …}` with each region as a waypoint (`rid` the region id, `desc` its name,
/// `lat`, `lon`, `rad`, and a `tst` derived from the id, since the apps tell waypoints apart
/// by it) and the re-plan circle as one more, always under the rid `fencepost:replan`, so the
/// app moves it instead of collecting old ones.
///
/// What was sent is remembered in memory (the 20,000 devices that posted last): after a
/// restart, or on another instance, a device gets its set once more, which changes nothing on
/// the phone. While the regions are unchanged and the device is inside the re-plan circle it
/// was sent (or was sent every region), nothing is planned: the set it has still keeps its
/// promise, and most posts cost a lookup.
final class OwnTracksWaypoints: Sendable {
    static let budget = 20
    /// The re-plan circle's waypoint: one, moved each time.
    static let replanID = "fencepost:replan"
    /// The re-plan circle's waypoint description.
    static let replanDescription = "Fencepost: ask again"
    private static let keptDevices = 20_000
    private let planner = MonitoredSetPlanner()
    private let sent = Mutex<[String: Sent]>([:])
    private let uses = Atomic<Int>(0)

    /// What a device was last sent.
    private struct Sent {
        var ids: [String]
        var replan: ReplanCircle?
        var revision: Int64
        var use: Int
    }

    /// The `setWaypoints` command for `device` at `position`, or nil when what it was last sent
    /// still holds.
    func command(for device: String, at position: Position, planning: PlanningRegions) async throws -> JSONValue? {
        let revision = try await planning.revision()
        let last = sent.withLock { $0[device] }
        if let last, last.revision == revision {
            guard let replan = last.replan else { return nil }  // every candidate was sent
            if Geodesy.distance(position, replan.center) < replan.radius { return nil }
        }
        let have = last?.ids ?? []
        let budget = try await planning.geofenceBudget(of: device) ?? Self.budget
        let plan = planner.plan(try await planning.candidates(for: device), at: position, budget: budget, have: have)
        let ids = (plan.regions.map(\.id) + (plan.replan.map { [$0.id] } ?? [])).sorted()
        let use = uses.add(1, ordering: .relaxed).newValue
        sent.withLock { sent in
            sent[device] = Sent(ids: ids, replan: plan.replan, revision: revision, use: use)
            if sent.count > Self.keptDevices {
                // Forget the tenth used longest ago.
                let oldest = sent.sorted { $0.value.use < $1.value.use }.prefix(Self.keptDevices / 10)
                for (key, _) in oldest { sent[key] = nil }
            }
        }
        guard ids != have, !(ids.isEmpty && have.isEmpty) else { return nil }
        var waypoints = plan.regions.map { region in
            Self.waypoint(
                id: region.id, description: region.name ?? region.id, center: region.circle.center,
                radius: region.circle.radius)
        }
        if let replan = plan.replan {
            waypoints.append(
                Self.waypoint(
                    id: Self.replanID, description: Self.replanDescription, center: replan.center,
                    radius: replan.radius))
        }
        return .object([
            "_type": .string("cmd"), "action": .string("setWaypoints"),
            "waypoints": .object(["_type": .string("waypoints"), "waypoints": .array(waypoints)]),
        ])
    }

    /// Forgets what `device` was sent (a command that could not be delivered): its next
    /// location plans and sends again.
    func forget(_ device: String) {
        _ = sent.withLock { $0.removeValue(forKey: device) }
    }

    private static func waypoint(id: String, description: String, center: Position, radius: Double) -> JSONValue {
        .object([
            "_type": .string("waypoint"), "rid": .string(id), "desc": .string(description),
            "lat": .number(center.lat), "lon": .number(center.lon), "rad": .number(radius.rounded(.up)),
            "tst": .number(Double(stableTime(id))),
        ])
    }

    /// A time for a waypoint's `tst` from its id (FNV-1a into 2001–2033): the same region keeps
    /// the same `tst`, so the app updates it instead of adding another.
    static func stableTime(_ id: String) -> Int {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in id.utf8 { hash = (hash ^ UInt64(byte)) &* 0x0100_0000_01b3 }
        return 1_000_000_000 + Int(hash % 1_000_000_000)
    }
}
