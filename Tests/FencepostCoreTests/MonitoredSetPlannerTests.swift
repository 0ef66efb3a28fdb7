import FencepostCore
import FencepostGeometry
import FencepostTestSupport
import Foundation
import Testing

/// The planner of a phone's monitored set, on hand-made layouts: what it picks, and the
/// promise the re-plan circle makes (no region left out reaches into it).
@Suite struct MonitoredSetPlannerTests {
    static let zurich = Position(lon: 8.54, lat: 47.37)

    /// A point `north` and `east` metres from `origin`.
    static func offset(_ origin: Position, north: Double, east: Double) -> Position {
        Position(
            lon: origin.lon + east / Geodesy.metresPerDegreeLongitude(atLatitude: origin.lat),
            lat: origin.lat + north / Geodesy.metresPerDegreeLatitude)
    }

    static func circle(_ id: String, _ center: Position, _ radius: Double) -> MonitoredSetPlanner.Candidate {
        .init(id: id, circle: OSCircle(center: center, radius: radius, approximate: false))
    }

    /// 500 circles of 50–300 m scattered over 8 × 8 km of a city (a fixed pseudo-random layout).
    static func city() -> [MonitoredSetPlanner.Candidate] {
        var state: UInt64 = 42
        func next() -> Double {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Double(state >> 11) / Double(1 << 53)
        }
        return (0..<500).map { index in
            circle(
                "c\(index)", offset(zurich, north: next() * 8_000 - 4_000, east: next() * 8_000 - 4_000),
                50 + next() * 250)
        }
    }

    /// What the promise needs: every region left out stays outside the re-plan circle.
    static func checkPromise(_ plan: MonitoredSetPlan, _ candidates: [MonitoredSetPlanner.Candidate]) {
        let monitored = Set(plan.regions.map(\.id))
        guard let replan = plan.replan else {
            #expect(monitored.count == candidates.count, "no re-plan circle only when everything is monitored")
            return
        }
        for candidate in candidates where !monitored.contains(candidate.id) {
            #expect(
                candidate.circle.distanceToEdge(from: replan.center) >= replan.radius,
                "\(candidate.id) reaches into the re-plan circle")
        }
    }

    @Test func inACityOfFiveHundredTheNineteenNearestAndAReplanCircleFillTheBudgetOfTwenty() {
        let city = Self.city()
        let device = Self.offset(Self.zurich, north: 120, east: -340)
        let plan = MonitoredSetPlanner().plan(city, at: device, budget: 20)
        #expect(plan.regions.count == 19)
        #expect(plan.replan != nil)
        #expect(plan.add.count == 20 && plan.remove.isEmpty && plan.keep.isEmpty)
        let nearest = city.sorted { $0.circle.distanceToEdge(from: device) < $1.circle.distanceToEdge(from: device) }
            .prefix(19).map(\.id)
        #expect(Set(plan.regions.map(\.id)) == Set(nearest))
        #expect(plan.regions.map(\.distance) == plan.regions.map(\.distance).sorted())
        Self.checkPromise(plan, city)
        // The re-plan circle reaches to the nearest region left out.
        let left = city.filter { !nearest.contains($0.id) }.map { $0.circle.distanceToEdge(from: device) }.min()!
        #expect(abs(plan.replan!.radius - left.rounded(.down)) <= 1)
    }

    @Test func aFewMetresOfMovementInsideTheReplanCircleChangeNothing() {
        let city = Self.city()
        let planner = MonitoredSetPlanner()
        let start = Self.offset(Self.zurich, north: 500, east: 500)
        let first = planner.plan(city, at: start, budget: 20)
        let have = first.add
        for (north, east) in [(3.0, 4.0), (-6.0, 2.0), (10.0, -10.0), (0.0, 15.0)] {
            let moved = planner.plan(city, at: Self.offset(start, north: north, east: east), budget: 20, have: have)
            #expect(moved.add.isEmpty && moved.remove.isEmpty, "moved \(north) N \(east) E")
            #expect(moved.keep == have.sorted())
            Self.checkPromise(moved, city)
        }
    }

    @Test func drivingAlongAMotorwayNoRegionIsReachedUnmonitored() {
        // 300 service areas and junctions every 400–700 m along 150 km heading east, 30–200 m
        // wide, some 50 m off the carriageway; a car at 30 m/s with a fix a second, asking again
        // on each exit from the re-plan circle.
        let origin = Position(lon: 7.0, lat: 47.0)
        var east = 0.0
        var regions: [MonitoredSetPlanner.Candidate] = []
        for index in 0..<300 {
            east += 400 + Double((index * 7_919) % 300)
            let north = index.isMultiple(of: 3) ? 80.0 : 0
            regions.append(
                Self.circle("m\(index)", Self.offset(origin, north: north, east: east), 30 + Double(index % 5) * 40))
        }
        let planner = MonitoredSetPlanner()
        var position = origin
        var plan = planner.plan(regions, at: position, budget: 20)
        var replans = 0
        for second in 1...5_000 {
            position = Self.offset(origin, north: 0, east: Double(second) * 30)
            if let replan = plan.replan, Geodesy.distance(position, replan.center) >= replan.radius {
                plan = planner.plan(regions, at: position, budget: 20, have: plan.regions.map(\.id) + [replan.id])
                replans += 1
                Self.checkPromise(plan, regions)
            }
            let monitored = Set(plan.regions.map(\.id))
            for region in regions where region.circle.distanceToEdge(from: position) <= 0 {
                #expect(monitored.contains(region.id), "at \(second) s inside \(region.id), not monitored")
            }
        }
        // 150 km in 5,000 s: about one re-plan per 9 km (19 regions ahead and behind).
        #expect(replans > 5 && replans < 60, "\(replans) re-plans")
    }

    @Test func farFromEveryRegionTheReplanCircleIsCappedAndEverythingNearestIsStillPlanned() {
        let regions = (0..<30).map {
            Self.circle("far\($0)", Self.offset(Self.zurich, north: 200_000, east: Double($0) * 1_000), 100)
        }
        let plan = MonitoredSetPlanner().plan(regions, at: Self.zurich, budget: 20)
        #expect(plan.regions.count == 19)
        #expect(plan.replan?.radius == 50_000)
        Self.checkPromise(plan, regions)
        // With everything fitting the budget, no re-plan circle is needed.
        let few = MonitoredSetPlanner().plan(Array(regions.prefix(5)), at: Self.zurich, budget: 20)
        #expect(few.regions.count == 5 && few.replan == nil)
    }

    @Test func regionsTheDeviceIsInsideComeFirstAndAHeldRegionSticks() {
        let device = Self.zurich
        let regions = [
            Self.circle("around", device, 2_000),  // edge 2 km away, but the device is inside
            Self.circle("near", Self.offset(device, north: 300, east: 0), 100),  // edge 200 m
            Self.circle("next", Self.offset(device, north: 0, east: 350), 100),  // edge 250 m
            Self.circle("far", Self.offset(device, north: 5_000, east: 0), 100),
        ]
        let plan = MonitoredSetPlanner().plan(regions, at: device, budget: 3)
        #expect(plan.regions.map(\.id) == ["around", "near"])
        // Held, `next` counts 200 m nearer and keeps its slot over `near`.
        let held = MonitoredSetPlanner().plan(regions, at: device, budget: 3, have: ["around", "next"])
        #expect(Set(held.regions.map(\.id)) == ["around", "next"])
        #expect(held.keep.contains("next") && held.remove.isEmpty)
        Self.checkPromise(held, regions)
    }

    @Test func aPolygonIsMonitoredAsItsSmallestEnclosingCircleFlaggedApproximate() throws {
        // A 1 km × 400 m rectangle: the circle is centred on it, its radius half the diagonal.
        let corners = [(-200.0, -500.0), (-200.0, 500.0), (200.0, 500.0), (200.0, -500.0)].map {
            Self.offset(Self.zurich, north: $0.0, east: $0.1)
        }
        let shape = RegionShape.area(.polygon(PolygonCoordinates(rings: [corners + [corners[0]]])))
        let circle = OSCircle(shape)
        #expect(circle.approximate)
        #expect(Geodesy.distance(circle.center, Self.zurich) < 1)
        #expect(abs(circle.radius - (200.0 * 200 + 500 * 500).squareRoot()) < 1)
        for corner in corners { #expect(Geodesy.distance(circle.center, corner) <= circle.radius + 1e-6) }
        let exact = OSCircle(.circle(center: Self.zurich, radius: 80))
        #expect(!exact.approximate && exact.radius == 80)
    }

    @Test func candidatesAreTheEnabledRegionsThatApplyToTheDeviceAndAreActiveOrStartSoon() throws {
        let circle = RegionShape.circle(center: Self.zurich, radius: 100)
        var disabled = RegionSettings()
        disabled.enabled = false
        var mornings = RegionSettings()
        mornings.schedule = RegionSchedule(
            timeZone: "Europe/Zurich",
            weekly: [RegionSchedule.Weekly(days: Weekday.allCases, from: 7 * 60, to: 9 * 60)])
        let regions = [
            Region(id: "all", shape: circle),
            Region(id: "off", shape: circle, settings: disabled),
            Region(id: "vans", shape: circle, audience: RegionAudience(groups: ["vans"])),
            Region(id: "mornings", shape: circle, settings: mornings),
        ]
        let roster = DeviceRoster([.init(device: "van-1", groups: ["vans"])])
        let prepared = regions.map(MonitoredSetPlanner.Candidate.init)
        func ids(_ device: String, _ time: String) -> [String] {
            let made = MonitoredSetPlanner.candidates(
                regions, device: device, roster: roster, at: Timestamp.parse(time)!)
            // A service's candidates, made once for every plan, are the same ones.
            #expect(
                MonitoredSetPlanner.candidates(
                    regions, prepared: prepared, device: device, roster: roster, at: Timestamp.parse(time)!
                ).candidates == made)
            return made.map(\.id)
        }
        // 08:00 Zurich (CET): the morning period is on.
        #expect(ids("van-1", "2026-11-25T07:00:00Z") == ["all", "vans", "mornings"])
        #expect(ids("phone", "2026-11-25T07:00:00Z") == ["all", "mornings"])
        // 22:00 local: it starts in 9 hours, within the 12-hour horizon.
        #expect(ids("phone", "2026-11-25T21:00:00Z") == ["all", "mornings"])
        // 12:00 local: the next start is 19 hours away.
        #expect(ids("phone", "2026-11-25T11:00:00Z") == ["all"])
        #expect(MonitoredSetPlanner.budget(platform: "iOS") == 20)
        #expect(MonitoredSetPlanner.budget(platform: "android") == 100)
    }

    @Test func theReplanIdCarriesItsCircle() throws {
        let replan = ReplanCircle(center: Position(lon: -8.66175, lat: 52.62915), radius: 812.7)
        #expect(replan.id == "replan@52.62915_-8.66175_812")
        let read = try #require(ReplanCircle(id: replan.id))
        #expect(read.radius == 812 && abs(read.center.lat - 52.62915) < 1e-9)
        #expect(ReplanCircle(id: "replan@91_0_5") == nil && ReplanCircle(id: "home") == nil)
    }

    /// The regions picked are the nearest by their edge (inside first; ties by id), whatever
    /// the budget: the planner selects them without sorting every candidate, and this checks
    /// the selection against a full sort of the city's 500 circles from 40 places.
    @Test func picksTheNearestAsAFullSortWould() {
        let planner = MonitoredSetPlanner()
        let candidates = Self.city()
        for step in 0..<40 {
            let here = Self.offset(
                Self.zurich, north: Double(step % 8) * 1_000 - 4_000, east: Double(step / 8) * 1_600 - 4_000)
            for budget in [2, 3, 20, 100, 499, 500, 600] {
                let plan = planner.plan(candidates, at: here, budget: budget)
                let ranked = candidates.map { ($0.id, $0.circle.distanceToEdge(from: here)) }
                    .map { ($0.0, $0.1, $0.1 <= 0 ? $0.1 - 1e12 : $0.1) }
                    .sorted { ($0.2, $0.0) < ($1.2, $1.0) }
                let expected = budget >= candidates.count ? ranked : Array(ranked.prefix(budget - 1))
                #expect(Set(plan.regions.map(\.id)) == Set(expected.map(\.0)), "budget \(budget) at step \(step)")
            }
        }
    }

    /// A selection of candidates (positions in a list of all, as a service plans from) is
    /// planned as the same candidates in an array of their own, held regions and re-plan
    /// circle included.
    @Test func aSelectionIsPlannedAsTheSameCandidatesOnTheirOwn() {
        let planner = MonitoredSetPlanner()
        let all = Self.city()
        var random = SplitMix64(seed: 20)
        for step in 0..<40 {
            let indices = all.indices.filter { _ in random.next() % 3 != 0 }
            let here = Self.offset(Self.zurich, north: Double(step) * 150 - 3_000, east: Double(step % 5) * 700 - 1_500)
            let have = indices.filter { _ in random.next() % 20 == 0 }.map { all[$0].id }
            let alone = planner.plan(indices.map { all[$0] }, at: here, budget: 20, have: have)
            let selected = planner.plan(
                MonitoredSetPlanner.Selection(all: all, indices: indices), at: here, budget: 20, have: have)
            #expect(selected == alone, "step \(step)")
            let again = planner.plan(
                MonitoredSetPlanner.Selection(all: all, indices: indices), at: here, budget: 20,
                have: alone.regions.map(\.id) + [alone.replan?.id].compactMap { $0 })
            #expect(again.add.isEmpty && again.remove.isEmpty, "step \(step)")
        }
    }
}
