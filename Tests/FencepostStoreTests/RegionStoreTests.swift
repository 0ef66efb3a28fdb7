import FencepostCore
import FencepostGeometry
import FencepostServerTestSupport
import FencepostStore
import FencepostTestSupport
import Foundation
import GRDB
import Synchronization
import Testing

@Suite struct RegionStoreTests {
    static func circle(_ id: String, radius: Double = 25, name: String? = nil) -> Region {
        Region(id: id, name: name, shape: .circle(center: Position(lon: -8.62, lat: 52.66), radius: radius))
    }

    static let square = Region(
        id: "square",
        shape: .area(
            .polygon(
                PolygonCoordinates(rings: [
                    [
                        Position(lon: 8.50, lat: 47.37), Position(lon: 8.51, lat: 47.37),
                        Position(lon: 8.51, lat: 47.38),
                        Position(lon: 8.50, lat: 47.38), Position(lon: 8.50, lat: 47.37),
                    ]
                ]))))

    @Test func applyThenReapplyIsANoOp() async throws {
        let store = try await TestStores.fresh()
        defer { TestStores.closeLater(store) }
        let desired = [Self.circle("a"), Self.circle("b"), Self.square]
        let first = try await store.applyRegions(desired)
        #expect(first.summary == "3 to add, 0 to update, 0 to remove, 0 unchanged")
        let second = try await store.applyRegions(desired)
        #expect(second.isEmpty)
        #expect(second.summary == "0 to add, 0 to update, 0 to remove, 3 unchanged")
        let monitored = try await store.monitoredRegions()
        #expect(monitored.map(\.region) == desired.sorted { $0.id < $1.id })
        #expect(monitored.allSatisfy { $0.version == 1 })
    }

    @Test func planChangesNothing() async throws {
        let store = try await TestStores.fresh()
        defer { TestStores.closeLater(store) }
        let plan = try await store.planRegions([Self.circle("a")])
        #expect(plan.addCount == 1)
        await #expect(try store.regionDigests().isEmpty)
    }

    @Test func geometryChangeUpdatesAndRetiresTheRegion() async throws {
        let store = try await TestStores.fresh()
        defer { TestStores.closeLater(store) }
        try await store.applyRegions([Self.circle("a"), Self.circle("b")])
        let plan = try await store.applyRegions([Self.circle("a", radius: 30), Self.circle("b")])
        #expect(plan.changes.map(\.line) == ["~ update a"])
        #expect(plan.retirements.map { "\($0.0) \($0.1.rawValue)" } == ["a region_changed"])
        let a = try await #require(try store.monitoredRegions().first { $0.region.id == "a" })
        #expect(a.version == 2)
        #expect(a.region.shape == .circle(center: Position(lon: -8.62, lat: 52.66), radius: 30))
    }

    @Test func propertyOnlyChangeUpdatesWithoutRetiring() async throws {
        let store = try await TestStores.fresh()
        defer { TestStores.closeLater(store) }
        try await store.applyRegions([Self.circle("a")])
        var renamed = Self.circle("a", name: "Stop A")
        renamed.settings.dwell = 60
        let plan = try await store.applyRegions([renamed])
        #expect(plan.changes == [.update(renamed, geometryChanged: false)])
        #expect(plan.retirements.isEmpty)
        await #expect(try store.monitoredRegions().first?.region.settings.dwell == 60)
    }

    @Test func removalDeletesAndRetires() async throws {
        let store = try await TestStores.fresh()
        defer { TestStores.closeLater(store) }
        try await store.applyRegions([Self.circle("a"), Self.square])
        let plan = try await store.applyRegions([Self.square])
        #expect(plan.changes.map(\.line) == ["- remove a"])
        #expect(plan.retirements.map { "\($0.0) \($0.1.rawValue)" } == ["a region_removed"])
        await #expect(try store.regionDigests().map(\.id) == ["square"])
    }

    @Test func aFailureMidApplyLeavesTheStoreAsItWas() async throws {
        let store = try await TestStores.fresh()
        defer { TestStores.closeLater(store) }
        try await store.applyRegions([Self.circle("a"), Self.circle("b")])
        let before = try await store.monitoredRegions()
        // A real database failure on the third write of the transaction.
        try await TestStores.refuseInserts(in: store, into: "regions", when: "NEW.id = 'zz'")
        let desired = [Self.circle("a", radius: 99), Self.circle("m"), Self.circle("zz")]
        let error = await #expect(throws: (any Error).self) { try await store.applyRegions(desired) }
        #expect("\(String(describing: error))".contains("injected failure"))
        await #expect(try store.monitoredRegions() == before)
    }

    @Test func aFailureClosingARetiredRegionsVisitsRollsBackTheWholeApply() async throws {
        let store = try await TestStores.fresh()
        defer { TestStores.closeLater(store) }
        try await store.applyRegions([Self.circle("a"), Self.circle("b")])
        // A device inside both circles: its visits stay open.
        let grid = WalkGrid(origin: Position(lon: -8.62, lat: 52.66))
        _ = try await StoreInputs.ingest(store, [(0..<30).map { grid.fix(0, t: Double($0)) }])
        let before = try await store.monitoredRegions()
        // A real database failure as the removed region's visit closes (its outbox row).
        try await TestStores.refuseInserts(in: store, into: "outbox", when: "NEW.entity = 'visit'")
        let error = await #expect(throws: (any Error).self) {
            try await store.applyRegions([Self.circle("b"), Self.circle("c")])
        }
        #expect("\(String(describing: error))".contains("injected failure"))
        await #expect(try store.monitoredRegions() == before)
        var open = 0
        try await store.forEachVisit(openOnly: true) { _ in open += 1 }
        #expect(open == 2)
    }

    @Test func fileStoreUsesWALAndPersistsAcrossOpens() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fencepost-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("nested/fencepost.db").path
        do {
            let store = try Store(path: path)
            try await store.applyRegions([Self.circle("a"), Self.square])
            let mode: String? = try await store.read { tx in try await tx.value("PRAGMA journal_mode") }
            #expect(mode == "wal")
        }
        let reopened = try Store(path: path)
        await #expect(try reopened.regionDigests().map(\.id) == ["a", "square"])
        await #expect(try reopened.applyRegions([Self.circle("a"), Self.square]).isEmpty)
    }

    @Test func defaultLocationFollowsTheEnvironment() {
        #expect(StoreLocation.defaultPath(environment: ["FENCEPOST_DB": "/x/y.db", "HOME": "/h"]) == "/x/y.db")
        #expect(
            StoreLocation.defaultPath(environment: ["XDG_DATA_HOME": "/d", "HOME": "/h"]) == "/d/fencepost/fencepost.db"
        )
        #expect(StoreLocation.defaultPath(environment: ["HOME": "/h"]) == "/h/.local/share/fencepost/fencepost.db")
    }
}
