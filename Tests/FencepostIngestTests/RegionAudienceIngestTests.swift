import FencepostCore
import FencepostGeometry
import FencepostIngest
import FencepostServerTestSupport
import FencepostStore
import Foundation
import Testing

/// Regions that say whom they apply to: a group, a device pattern, everyone; and visits closed
/// `region_unassigned` when a device stops being selected.
@Suite struct RegionAudienceIngestTests {
    let grid = WalkGrid(origin: Position(lon: -8.62, lat: 52.66))

    /// Three circles in the same place (50 m around the walk's middle), each for another audience.
    func regions() -> [Region] {
        var depot = grid.circle("blue-depot", x: 0, radius: 50)
        depot.audience = RegionAudience(groups: ["blue"])
        var cars = grid.circle("cars", x: 0, radius: 50)
        cars.audience = RegionAudience(devices: ["car-*"])
        return [grid.circle("all", x: 0, radius: 50), depot, cars]
    }

    /// Per device, its events as `kind region`, in order.
    func eventsByDevice(_ store: Store) async throws -> [String: [String]] {
        var events: [String: [String]] = [:]
        try await store.forEachEvent(EventQuery()) {
            events[$0.device, default: []].append("\($0.kind) \($0.region ?? "")")
        }
        return events.mapValues { $0.sorted() }
    }

    func visits(_ store: Store) async throws -> [String] {
        var result: [String] = []
        try await store.forEachVisit {
            result.append("\($0.device) \($0.region) \($0.exitedAt ?? "open") \($0.exitReason ?? "")")
        }
        return result.sorted()
    }

    @Test func eachDeviceGetsTheEventsOfExactlyTheRegionsThatApplyToIt() async throws {
        let store = try await TestStores.fresh()
        defer { TestStores.closeLater(store) }
        try await store.applyRegions(regions())
        try await store.applyRoster(DeviceRoster([.init(device: "a", name: "Ann", groups: ["blue"])]))
        _ = try await StoreInputs.ingest(store, ["a", "car-7", "b"].map { grid.walk(device: $0) })
        #expect(
            try await eventsByDevice(store) == [
                "a": ["enter all", "enter blue-depot", "exit all", "exit blue-depot"],
                "car-7": ["enter all", "enter cars", "exit all", "exit cars"],
                "b": ["enter all", "exit all"],
            ])
    }

    @Test func leavingTheGroupClosesTheVisitAtTheLastFixAndNothingMoreComesOfIt() async throws {
        let store = try await TestStores.fresh()
        defer { TestStores.closeLater(store) }
        try await store.applyRegions(regions())
        try await store.applyRoster(DeviceRoster([.init(device: "a", groups: ["blue"])]))
        let walk = grid.walk(device: "a")
        // To the middle (x = 0 at t = 150 s): inside `all` and `blue-depot`.
        _ = try await StoreInputs.ingest(store, [Array(walk[...150])])
        let plan = try await store.applyRoster(DeviceRoster([.init(device: "a")]))
        #expect(plan.updated.map(\.after.device) == ["a"])
        // Closed at the device's last fix, 2023-11-14T22:13:20Z + 150 s; `all` stays open.
        #expect(
            try await visits(store) == [
                "a all open ", "a blue-depot 2023-11-14T22:15:50.000Z region_unassigned",
            ])
        // The rest of the walk: out of `all`; no event of the depot, which no longer applies.
        _ = try await StoreInputs.ingest(store, [Array(walk[151...])])
        #expect(try await eventsByDevice(store)["a"] == ["enter all", "enter blue-depot", "exit all"])
        let closed = try await visits(store)
        #expect(closed.count == 2 && closed[0].hasPrefix("a all 2023-11-14T22:1") && closed[0].hasSuffix(" exit"))
    }

    @Test func narrowingARegionClosesTheVisitsOfDevicesItNoLongerSelects() async throws {
        let store = try await TestStores.fresh()
        defer { TestStores.closeLater(store) }
        try await store.applyRegions(regions())
        _ = try await StoreInputs.ingest(store, [Array(grid.walk(device: "b")[...150])])
        var narrowed = regions()
        narrowed[0].audience = RegionAudience(devices: ["someone-else"])
        try await store.applyRegions(narrowed)
        #expect(try await visits(store) == ["b all 2023-11-14T22:15:50.000Z region_unassigned"])
        _ = try await StoreInputs.ingest(store, [Array(grid.walk(device: "b")[151...])])
        #expect(try await eventsByDevice(store)["b"] == ["enter all"])
    }
}

/// A region's `max_dwell`: an `overstay` event in the store, once, the visit left as it is.
@Suite struct OverstayIngestTests {
    let grid = WalkGrid(origin: Position(lon: -8.62, lat: 52.66))

    @Test func aVisitOpenPastMaxDwellGetsOneOverstayEventAndStaysOpen() async throws {
        let store = try await TestStores.fresh()
        defer { TestStores.closeLater(store) }
        var depot = grid.circle("depot", x: 0, radius: 50)
        depot.settings.maxDwell = 60
        try await store.applyRegions([depot])
        // At the centre from t = 0 to t = 100, one fix a second, in two inputs (a saved state between).
        let staying = (0...100).map { grid.fix(0, t: Double($0), device: "van") }
        let summary = try await StoreInputs.ingest(store, [Array(staying[...30]), Array(staying[31...])])
        #expect(summary.events == [.enter: 1, .overstay: 1])
        var events: [String] = []
        try await store.forEachEvent(EventQuery()) { events.append("\($0.kind) \($0.time)") }
        // Entered at the first fix, 2023-11-14T22:13:20Z; the overstay 60 s later.
        #expect(events == ["enter 2023-11-14T22:13:20.000Z", "overstay 2023-11-14T22:14:20.000Z"])
        var visits: [String] = []
        try await store.forEachVisit { visits.append("\($0.region) \($0.status)") }
        #expect(visits == ["depot open"])
    }
}
