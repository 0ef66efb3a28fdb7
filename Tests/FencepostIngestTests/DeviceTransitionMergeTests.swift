import FencepostCore
import FencepostGeometry
import FencepostIngest
import FencepostServerTestSupport
import FencepostStore
import Foundation
import Testing

/// Device-reported transitions in a real store beside the server's own events: one visit per
/// stay, device-only visits, a device exit closing the server's visit, the same events and
/// visits whatever the order the fixes and reports arrive in, refusals that write nothing.
@Suite struct DeviceTransitionMergeTests {
    let grid = WalkGrid(origin: Position(lon: -8.62, lat: 52.66))
    /// The walk (x from -300 m at 2 m/s) enters this 200 m circle at about t = 50 s and leaves
    /// it at about t = 250 s.
    var home: Region { grid.circle("home", x: 0, radius: 200) }
    let start = 1_700_000_000.0

    func report(_ kind: EventKind, at t: Double, device: String = "bus", region: String = "home") -> DeviceTransition {
        DeviceTransition(device: device, regionID: region, kind: kind, time: start + t, accuracy: 20)
    }

    func store() async throws -> Store {
        let store = try await TestStores.fresh()
        try await store.applyRegions([home, grid.circle("yard", x: 2000, radius: 50)])
        return store
    }

    /// Events as `kind flags visit-entered-at`, and visits as `entered–exited reason`, sorted.
    func contents(_ store: Store) async throws -> (events: [String], visits: [String]) {
        var visitsByID: [String: String] = [:]
        var visits: [String] = []
        try await store.forEachVisit { visit in
            visitsByID[visit.id] = visit.enteredAt
            visits.append("\(visit.enteredAt)–\(visit.exitedAt ?? "open") \(visit.exitReason ?? "")")
        }
        var events: [String] = []
        try await store.forEachEvent(EventQuery()) { event in
            let visit = event.visitID.map { visitsByID[$0] ?? "missing \($0)" } ?? "none"
            events.append("\(event.time) \(event.kind) [\(event.flags.joined(separator: ","))] \(visit)")
        }
        return (events.sorted(), visits.sorted())
    }

    @Test func reportsWithoutFixesMakeADeviceOnlyVisit() async throws {
        let store = try await store()
        defer { TestStores.closeLater(store) }
        let written = try await store.write([report(.enter, at: 100), report(.exit, at: 700)])
        #expect(written.map(\.flags) == [["device"], ["device"]])
        #expect(
            Set(written.map(\.visitID)) == [
                DeterministicID.visit(device: "bus", region: "home", enteredAt: start + 100)
            ])
        #expect(try await contents(store).visits == ["2023-11-14T22:15:00.000Z–2023-11-14T22:25:00.000Z exit"])
        // Sent again: nothing changes.
        _ = try await store.write([report(.exit, at: 700), report(.enter, at: 100)])
        #expect(try await contents(store).visits.count == 1)
    }

    @Test func aDeviceEnterWithinTheWindowOfTheServersIsOneEnter() async throws {
        let store = try await store()
        defer { TestStores.closeLater(store) }
        _ = try await StoreInputs.ingest(store, [grid.walk()])
        let server = try await contents(store)
        #expect(server.visits.count == 1)
        // The OS reports the enter 2 minutes after the fixes crossed.
        let written = try await store.write([report(.enter, at: 170)])
        let merged = try await contents(store)
        #expect(merged.visits == server.visits)
        #expect(merged.events.count == 3)
        #expect(written.first?.visitID == DeterministicID.visit(device: "bus", region: "home", enteredAt: start + 50))
    }

    @Test func aDeviceExitClosesTheVisitTheServerOpened() async throws {
        let store = try await store()
        defer { TestStores.closeLater(store) }
        let walk = grid.walk()
        _ = try await StoreInputs.ingest(store, [Array(walk[...150])])
        #expect(try await contents(store).visits.map { $0.hasSuffix("open ") } == [true])
        _ = try await store.write([report(.exit, at: 160)])
        let closed = try await contents(store).visits
        #expect(closed.count == 1 && closed[0].hasSuffix("–2023-11-14T22:16:00.000Z exit"))
        // The fixes go on and leave at about 250 s: the visit stays closed at the device's exit,
        // and the server's exit joins it.
        _ = try await StoreInputs.ingest(store, [Array(walk[151...])])
        let after = try await contents(store)
        #expect(after.visits == closed)
        #expect(after.events.filter { $0.contains(" exit ") }.count == 2)
        #expect(after.events.allSatisfy { !$0.contains("missing") && !$0.hasSuffix("none") })
    }

    /// Fixes and reports in every order (fixes first, reports first, split around them, one
    /// report at a time in reverse) give the same events and visits: the reports' enter comes
    /// first in time here, so whichever arrives later the visit is the one it names.
    @Test func theSameFixesAndReportsInAnyOrderGiveTheSameEventsAndVisits() async throws {
        let walk = grid.walk()
        let reports = [report(.enter, at: 30), report(.exit, at: 280), report(.enter, at: 400)]
        typealias Step = (Store) async throws -> Void
        let fixes: (ArraySlice<Fix>) -> Step = { part in { _ = try await StoreInputs.ingest($0, [Array(part)]) } }
        let send: ([DeviceTransition]) -> Step = { part in { _ = try await $0.write(part) } }
        let orders: [[Step]] = [
            [fixes(walk[...]), send(reports)],
            [send(reports), fixes(walk[...])],
            [send([reports[2]]), fixes(walk[...120]), send([reports[1]]), fixes(walk[121...]), send([reports[0]])],
            [fixes(walk[...200]), send(reports.reversed()), fixes(walk[201...])],
        ]
        var results: [(events: [String], visits: [String])] = []
        for order in orders {
            let store = try await store()
            defer { TestStores.closeLater(store) }
            for step in order { try await step(store) }
            results.append(try await contents(store))
        }
        for result in results.dropFirst() {
            #expect(result.events == results[0].events)
            #expect(result.visits == results[0].visits)
        }
        #expect(results[0].visits.count == 2)
        #expect(results[0].visits[0].hasPrefix("2023-11-14T22:13:50.000Z–"))
        #expect(results[0].visits[1] == "2023-11-14T22:20:00.000Z–open ")
    }

    @Test func anOpenVisitFromReportsIsClosedByTheFixesOfALaterSession() async throws {
        let store = try await store()
        defer { TestStores.closeLater(store) }
        _ = try await store.write([report(.enter, at: 40)])
        // A new session, as after a restart: its monitor knows nothing of the report; its enter
        // (about 50 s) joins the open visit and its exit closes it; the batch's answer says so.
        let outcomes = try await IngestSession(store: store).ingest(batches: [grid.walk()])
        let visit = DeterministicID.visit(device: "bus", region: "home", enteredAt: start + 40)
        #expect(outcomes.first?.events.map(\.visitID) == [visit, visit])
        let after = try await contents(store)
        #expect(after.visits.count == 1)
        #expect(
            after.visits[0].hasPrefix("2023-11-14T22:14:00.000Z–2023-11-14T22:17:")
                && after.visits[0].hasSuffix(" exit"))
        #expect(after.events.allSatisfy { $0.hasSuffix("2023-11-14T22:14:00.000Z") })
    }

    /// A group whose requests hold a reporting device's enter and exit in two requests, beside
    /// another device's, is written request by request, each merged as it comes (on PostgreSQL
    /// too, where a group's requests are otherwise written together): the same events and
    /// visits as the requests committed one at a time, each answered with its own events, in
    /// their merged visits.
    @Test func aGroupWithAReportingDeviceIsWrittenRequestByRequest() async throws {
        let (bus, tram) = (grid.walk(), grid.walk(device: "tram"))
        let requests = [Array(bus[..<100]), Array(tram[..<100]), Array(bus[100...]), Array(tram[100...])]
        var answers: [[[String]]] = []
        var results: [(events: [String], visits: [String])] = []
        for together in [false, true] {
            let store = try await store()
            defer { TestStores.closeLater(store) }
            _ = try await store.write([report(.enter, at: 40)])
            let session = try await IngestSession(store: store)
            var outcomes: [BatchOutcome] = []
            if together {
                outcomes = try await session.ingest(batches: requests)
            } else {
                for request in requests { outcomes += try await session.ingest(batches: [request]) }
            }
            answers.append(outcomes.map { $0.events.map(\.visitID) })
            results.append(try await contents(store))
        }
        #expect(answers[1] == answers[0])
        #expect(results[1].events == results[0].events)
        #expect(results[1].visits == results[0].visits)
        let visit = DeterministicID.visit(device: "bus", region: "home", enteredAt: start + 40)
        #expect(answers[0][0] == [visit] && answers[0][2] == [visit])
        #expect(answers[0][1].count == 1 && answers[0][3].count == 1)
    }

    @Test func removingTheRegionClosesAVisitOnlyTheDeviceReported() async throws {
        let store = try await store()
        defer { TestStores.closeLater(store) }
        _ = try await store.write([report(.enter, at: 100)])
        try await store.applyRegions([grid.circle("yard", x: 2000, radius: 50)])
        let visits = try await contents(store).visits
        #expect(visits.count == 1 && visits[0].hasSuffix(" region_removed"))
    }

    @Test func anUnknownRegionRefusesTheReportsAndWritesNothing() async throws {
        let store = try await store()
        defer { TestStores.closeLater(store) }
        let before = try await store.syncStatus()
        await #expect(throws: TransitionRefusal.unknownRegion(index: 1, region: "nowhere")) {
            try await store.write([report(.enter, at: 100), report(.enter, at: 100, region: "nowhere")])
        }
        #expect(try await contents(store).events.isEmpty)
        #expect(try await store.syncStatus().counts == before.counts)
    }

    @Test func aRegionThatDoesNotApplyToTheDeviceIsRefused() async throws {
        let store = try await store()
        defer { TestStores.closeLater(store) }
        var cars = grid.circle("cars-only", x: 0, radius: 50)
        cars.audience = RegionAudience(devices: ["car-*"])
        try await store.applyRegions([home, cars])
        await #expect(throws: TransitionRefusal.notInAudience(index: 0, region: "cars-only", device: "bus")) {
            try await store.write([report(.enter, at: 100, region: "cars-only")])
        }
        _ = try await store.write([report(.enter, at: 100, device: "car-1", region: "cars-only")])
    }

    @Test func mergedChangesReachTheOutbox() async throws {
        let store = try await store()
        defer { TestStores.closeLater(store) }
        _ = try await StoreInputs.ingest(store, [grid.walk()])
        let before = try await store.syncChanges(after: 0, entities: nil, device: nil, limit: 10_000).count
        // An enter before the server's renames the visit: the old one is deleted, the new one
        // and the server's events (now in it) are upserted, and the report itself.
        _ = try await store.write([report(.enter, at: 20)])
        let changes = try await store.syncChanges(after: 0, entities: nil, device: nil, limit: 10_000).dropFirst(before)
        let summary = changes.map { "\($0.mutation.entity.name) \($0.mutation.op.rawValue)" }
        #expect(summary.filter { $0 == "visit delete" }.count == 1)
        #expect(summary.filter { $0 == "visit upsert" }.count == 1)
        #expect(summary.filter { $0 == "event upsert" }.count == 3)
        let visit = DeterministicID.visit(device: "bus", region: "home", enteredAt: start + 20)
        #expect(changes.filter { $0.mutation.entity == .event }.allSatisfy { $0.mutation.payload.contains(visit) })

        // A backend applying the whole feed, as `sync push` sends it, ends with the same
        // visits: the renamed one deleted there too.
        let backend = try await TestStores.fresh()
        defer { TestStores.closeLater(backend) }
        let feed = try await store.syncChanges(after: 0, entities: [.event, .visit], device: nil, limit: 10_000)
        let results = try await backend.applyMutations(
            feed.map(\.mutation), permissions: SyncPermissions(device: nil, regions: false))
        #expect(results.allSatisfy { if case .applied = $0 { true } else { false } }, "\(results)")
        #expect(try await contents(backend).visits == contents(store).visits)
        #expect(try await contents(backend).events == contents(store).events)
    }
}
