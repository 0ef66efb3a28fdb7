import FencepostCore
import FencepostFormats
import FencepostGeometry
import FencepostStore
import Foundation
import Hummingbird
import NIOCore

/// A phone that geofences on its own asks what to monitor: `GET|POST
/// /v1/devices/{id}/monitored-set` answers the regions within its OS's budget as circles, the
/// re-plan circle, and the diff from what it monitors now (``MonitoredSetPlanner``). Any token
/// that reads the device may ask; nothing is written.
struct MonitoredSetController {
    let auth: Authenticator
    let store: Store
    let planning: PlanningRegions
    let maxBodyBytes: Int
    let planner = MonitoredSetPlanner()

    func addRoutes(to router: Router<FencepostRequestContext>) {
        let routes = router.authenticated(by: auth)
        routes.get("/v1/devices/:device/monitored-set", use: plan)
        routes.post("/v1/devices/:device/monitored-set", use: plan)
    }

    /// Parameters in the query (`lat`, `lon`, `budget` or `platform`, `have=ID,ID`), or, for a
    /// POST, the same as members of a JSON object (`have` an array); a POST's body wins.
    @Sendable func plan(_ request: Request, context: FencepostRequestContext) async throws -> Response {
        let device = try context.parameters.require("device")
        _ = try await context.requireCaller().readScope(asking: device, store: store)
        var asked = Asked(query: request)
        if request.method == .post {
            let bytes = Array(buffer: try await request.collectBody(limit: maxBodyBytes))
            if !bytes.isEmpty { try asked.read(try LocationPayloads.parse(bytes)) }
        }
        let budget = try asked.budget(roster: try await planning.geofenceBudget(of: device))
        let position: Position
        if let lat = asked.lat, let lon = asked.lon {
            guard abs(lat) <= 90, abs(lon) <= 180 else {
                throw APIError.badRequest("lat/lon out of range: \(lat), \(lon)")
            }
            position = Position(lon: lon, lat: lat)
        } else if let last = try await store.deviceState(device)?.monitor.lastFix {
            position = Position(lon: last.lon, lat: last.lat)
        } else {
            throw APIError.badRequest("lat and lon are required: device \(device) has posted no fix yet")
        }
        let candidates = try await planning.candidates(for: device)
        let plan = planner.plan(
            candidates, at: position, budget: budget, have: asked.have, margin: try asked.margin())
        return .json(Self.json(plan, device: device, at: position, budget: budget).canonicalText())
    }

    static func json(_ plan: MonitoredSetPlan, device: String, at position: Position, budget: Int) -> JSONValue {
        .object([
            "device": .string(device),
            "at": .object(["lat": .number(position.lat), "lon": .number(position.lon)]),
            "budget": .number(Double(budget)),
            "candidates": .number(Double(plan.candidates)),
            "regions": .array(
                plan.regions.map { region in
                    .object([
                        "id": .string(region.id), "name": region.name.map(JSONValue.string) ?? .null,
                        "lat": .number(region.circle.center.lat), "lon": .number(region.circle.center.lon),
                        "radius": .number((region.circle.radius * 10).rounded(.up) / 10),
                        "approximate": .bool(region.circle.approximate),
                        "distance": .number(region.distance.rounded()),
                    ])
                }),
            "replan": plan.replan.map { replan in
                .object([
                    "id": .string(replan.id), "lat": .number(replan.center.lat), "lon": .number(replan.center.lon),
                    "radius": .number(replan.radius),
                ])
            } ?? .null,
            "add": .array(plan.add.map(JSONValue.string)),
            "remove": .array(plan.remove.map(JSONValue.string)),
            "keep": .array(plan.keep.map(JSONValue.string)),
        ])
    }

    /// What the phone told: where it is, its budget, what it monitors now.
    struct Asked {
        var lat: Double?
        var lon: Double?
        var budgetText: String?
        var platform: String?
        var have: [String] = []
        /// Metres a second, and the seconds the OS takes to report the re-plan exit: their
        /// product comes off the re-plan circle.
        var speed: Double?
        var delay: Double?

        init(query request: Request) {
            speed = request.query("speed").flatMap(Double.init)
            delay = request.query("delay").flatMap(Double.init)
            lat = request.query("lat").flatMap(Double.init)
            lon = request.query("lon").flatMap(Double.init)
            budgetText = request.query("budget")
            platform = request.query("platform")
            have = request.query("have").map { $0.split(separator: ",").map(String.init) } ?? []
        }

        mutating func read(_ body: JSONValue) throws {
            guard case .object = body else { throw APIError.badRequest("the body must be a JSON object") }
            if let lat = body["lat"]?.numberValue { self.lat = lat }
            if let lon = body["lon"]?.numberValue { self.lon = lon }
            if let budget = body["budget"]?.numberValue { budgetText = JSONValue.format(budget) }
            if let platform = body["platform"]?.stringValue { self.platform = platform }
            if let speed = body["speed"]?.numberValue { self.speed = speed }
            if let delay = body["delay"]?.numberValue { self.delay = delay }
            if let have = body["have"] {
                guard let items = have.arrayValue, items.allSatisfy({ $0.stringValue != nil }) else {
                    throw APIError.badRequest("have must be an array of region ids")
                }
                self.have = items.compactMap(\.stringValue)
            }
            guard have.count <= 10_000 else { throw APIError.badRequest("have lists more than 10,000 ids") }
        }

        /// Metres off the re-plan circle: speed × delay, each 0 when not given.
        func margin() throws -> Double {
            let (speed, delay) = (speed ?? 0, delay ?? 0)
            guard speed.isFinite, delay.isFinite, (0...300).contains(speed), (0...3_600).contains(delay) else {
                throw APIError.badRequest("speed must be 0 to 300 m/s and delay 0 to 3600 s")
            }
            return speed * delay
        }

        /// `budget` (2 to 10,000), else the platform's, else the roster's for the device
        /// (`roster`), else iOS's 20: the strictest.
        func budget(roster: Int?) throws -> Int {
            if let budgetText {
                guard let budget = Int(budgetText), (2...10_000).contains(budget) else {
                    throw APIError.badRequest("budget must be a whole number from 2 to 10000, not \(budgetText)")
                }
                return budget
            }
            if let platform {
                guard let budget = MonitoredSetPlanner.budget(platform: platform) else {
                    throw APIError.badRequest("platform must be ios or android, not \(platform)")
                }
                return budget
            }
            return roster ?? 20
        }
    }
}
