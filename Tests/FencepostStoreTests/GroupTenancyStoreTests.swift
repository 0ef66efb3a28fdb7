import FencepostCore
import FencepostGeometry
import FencepostServerTestSupport
import FencepostStore
import Foundation
import Testing

/// A roster group as a tenant in the store: reads confined to its members by the roster as it
/// is when they run, and its regions planned and applied without touching anyone else's.
@Suite struct GroupTenancyStoreTests {
    static let grid = WalkGrid(origin: Position(lon: -8.62, lat: 52.66))

    /// a1 and a2 in alpha, b1 in beta, x on no roster; each walks through one region for everyone.
    static func tenants() async throws -> Store {
        let store = try await TestStores.fresh()
        try await store.applyRoster(
            DeviceRoster([
                .init(device: "a1", groups: ["alpha"]), .init(device: "a2", groups: ["alpha"]),
                .init(device: "b1", groups: ["beta"]),
            ]))
        try await store.applyRegions([grid.circle("stop", x: 0, radius: 50)])
        _ = try await StoreInputs.ingest(store, ["a1", "a2", "b1", "x"].map { grid.walk(device: $0) })
        return store
    }

    @Test("a group's reads return its members' rows only, page by page, and follow the roster")
    func readsFollowTheRoster() async throws {
        let store = try await Self.tenants()
        defer { TestStores.closeLater(store) }
        var all: [EventRow] = []
        try await store.forEachEvent(EventQuery(group: "alpha")) { all.append($0) }
        #expect(all.count == 4)
        #expect(Set(all.map(\.device)) == ["a1", "a2"])

        // One at a time: the pages, in order, are the whole selection.
        var paged: [EventRow] = []
        var cursor: EventCursor?
        while let event = try await store.events(EventQuery(group: "alpha"), after: cursor, limit: 1).first {
            paged.append(event)
            cursor = EventCursor(timeMs: event.timeMs, id: event.id)
        }
        #expect(paged == all)
        #expect(try await store.eventCursor(EventQuery(group: "alpha"), after: nil, offset: 3)?.id == all[3].id)
        #expect(try await store.eventCursor(EventQuery(group: "alpha"), after: nil, offset: 4) == nil)

        var visits: [VisitRow] = []
        try await store.forEachVisit(group: "alpha") { visits.append($0) }
        #expect(visits.map(\.device).sorted() == ["a1", "a2"])
        let feed = try await store.eventFeed(after: 0, device: nil, group: "alpha", limit: 100)
        #expect(Set(feed.map(\.event.id)) == Set(all.map(\.id)))
        let changes = try await store.syncChanges(after: 0, entities: nil, device: nil, group: "alpha", limit: 1_000)
        #expect(changes.filter { $0.mutation.entity == .event }.count == 4)
        #expect(changes.allSatisfy { [.event, .visit].contains($0.mutation.entity) })
        #expect(try await store.devicesOutside(group: "alpha", among: ["a1", "b1", "x"]) == ["b1", "x"])

        // b1 joins alpha: the next read has it.
        try await store.editRoster { roster in
            var roster = roster
            roster.entries["b1"]?.groups = ["alpha", "beta"]
            return roster
        }
        var devices = Set<String>()
        try await store.forEachEvent(EventQuery(group: "alpha")) { devices.insert($0.device) }
        #expect(devices == ["a1", "a2", "b1"])
        #expect(try await store.devicesOutside(group: "alpha", among: ["a1", "b1", "x"]) == ["x"])
    }

    static func region(_ id: String, radius: Double = 40, groups: [String] = [], devices: [String] = []) -> Region {
        var region = grid.circle(id, x: 0, radius: radius)
        region.audience = RegionAudience(devices: devices, groups: groups)
        return region
    }

    /// Everything a refused edit must leave as it was.
    static func snapshot(_ store: Store) async throws -> [String] {
        try await store.monitoredRegions().map { "\($0.region.id) v\($0.version) \($0.region.contentHash)" } + [
            "revision \(try await store.regionsRevision())"
        ]
    }

    @Test("a group's apply changes only the regions inside it; one that reaches outside writes nothing")
    func groupApplyStaysInside() async throws {
        let store = try await Self.tenants()
        defer { TestStores.closeLater(store) }
        try await store.applyRegions([
            Self.region("everyone"), Self.region("alpha-depot", groups: ["alpha"]),
            Self.region("beta-depot", groups: ["beta"]), Self.region("a1-home", devices: ["a1"]),
            Self.region("a-star", devices: ["a*"]), Self.region("alpha-beta", groups: ["alpha", "beta"]),
        ])
        let tenancy = try await store.groupTenancy("alpha")
        let monitored = try await store.monitoredRegions().map(\.region)
        #expect(monitored.filter(tenancy.manages).map(\.id) == ["a1-home", "alpha-depot"])
        #expect(
            monitored.filter(tenancy.sees).map(\.id) == ["a-star", "a1-home", "alpha-beta", "alpha-depot", "everyone"])
        let before = try await Self.snapshot(store)

        let desired = [
            Self.region("alpha-depot", radius: 60, groups: ["alpha"]), Self.region("alpha-2", groups: ["alpha"]),
        ]
        let planned = try await store.planGroupRegions("alpha") { _ in desired }
        #expect(planned.changes.map(\.line) == ["- remove a1-home", "+ add alpha-2", "~ update alpha-depot"])
        #expect(planned.unchanged.isEmpty)
        #expect(try await Self.snapshot(store) == before, "a plan changes nothing")

        // Refused whole, nothing written: a feature for another group, one by pattern, one
        // naming a device outside, one taking over another region's id.
        let refusals: [(Region, GroupRegionRefusal)] = [
            (
                Self.region("alpha-2", groups: ["beta"]),
                .outside(region: "alpha-2", group: "alpha", reason: "it selects the group beta")
            ),
            (
                Self.region("alpha-2", devices: ["a*"]),
                .outside(
                    region: "alpha-2", group: "alpha",
                    reason: "it selects devices by the pattern a*, which may match devices outside the group")
            ),
            (
                Self.region("alpha-2", devices: ["a1", "b1"]),
                .outside(
                    region: "alpha-2", group: "alpha", reason: "it selects the device b1, which is not in the group")
            ),
            (
                Self.region("alpha-2"),
                .outside(
                    region: "alpha-2", group: "alpha",
                    reason: "it applies to every device (it has no devices or groups selector)")
            ),
            (Self.region("beta-depot", groups: ["alpha"]), .notManaged(region: "beta-depot", group: "alpha")),
        ]
        for (region, refusal) in refusals {
            await #expect(throws: refusal) { try await store.applyGroupRegions("alpha") { _ in desired + [region] } }
            await #expect(throws: refusal) { try await store.planGroupRegions("alpha") { _ in desired + [region] } }
        }
        #expect(try await Self.snapshot(store) == before)

        let applied = try await store.applyGroupRegions("alpha") { _ in desired }
        #expect(applied.changes == planned.changes)
        let after = try await store.monitoredRegions()
        #expect(after.map(\.region.id) == ["a-star", "alpha-2", "alpha-beta", "alpha-depot", "beta-depot", "everyone"])
        let untouched = Set(["a-star", "alpha-beta", "beta-depot", "everyone"])
        #expect(after.filter { untouched.contains($0.region.id) }.allSatisfy { $0.version == 1 })
        let again = try await store.applyGroupRegions("alpha") { _ in desired }
        #expect(again.isEmpty)
        #expect(again.unchanged == ["alpha-2", "alpha-depot"], "the group's own regions only")
    }
}
