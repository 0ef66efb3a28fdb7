import FencepostCore
import FencepostGeometry
import FencepostIngest
import FencepostServerTestSupport
import FencepostStore
import Foundation
import Testing

/// Regions' rules through the store: visits that open at a schedule's start and close
/// `schedule_ended` at its end, across inputs; `absent` events stored and counted; an
/// `overspeed`'s measures in its properties, read back and in its sync payload.
@Suite struct RegionRulesIngestTests {
    let projection = LocalProjection(origin: Position(lon: -6.26, lat: 53.35))

    func fix(_ x: Double, at time: String, plus seconds: Double = 0) -> Fix {
        let p = projection.unproject(x: x, y: 0)
        return Fix(device: "van", time: Timestamp.parse(time)! + seconds, lat: p.lat, lon: p.lon, accuracy: 5)
    }

    /// 100 m around the origin, Monday to Friday 07:00 to 09:00 Irish time.
    func school(expectsInside: Bool = false) -> Region {
        let schedule = RegionSchedule(
            timeZone: "Europe/Dublin",
            weekly: [.init(days: [.monday, .tuesday, .wednesday, .thursday, .friday], from: 420, to: 540)])
        return Region(
            id: "school", shape: .circle(center: projection.origin, radius: 100),
            settings: RegionSettings(schedule: schedule, expectsInside: expectsInside))
    }

    func visits(_ store: Store) async throws -> [String] {
        var result: [String] = []
        try await store.forEachVisit {
            result.append("\($0.enteredAt) \($0.exitedAt ?? "open") \($0.exitReason ?? "")")
        }
        return result.sorted()
    }

    @Test func aVisitOpenedByAPeriodInOneInputClosesAtItsEndInTheNext() async throws {
        let store = try await TestStores.fresh()
        defer { TestStores.closeLater(store) }
        try await store.applyRegions([school()])
        // Friday 23 October (summer time, 07:00 local = 06:00Z): at the school from 05:55Z,
        // a fix every 10 minutes; the first input ends at 07:05Z, the second runs to 08:25Z.
        let fixes = (0...15).map { fix(0, at: "2026-10-23T05:55:00Z", plus: Double($0) * 600) }
        _ = try await StoreInputs.ingest(store, [Array(fixes[...7])])
        #expect(try await visits(store) == ["2026-10-23T06:00:00.000Z open "])
        _ = try await StoreInputs.ingest(store, [Array(fixes[8...])])
        #expect(try await visits(store) == ["2026-10-23T06:00:00.000Z 2026-10-23T08:00:00.000Z schedule_ended"])
        var events: [String] = []
        try await store.forEachEvent(EventQuery()) { events.append("\($0.kind) \($0.time) \($0.flags)") }
        #expect(
            events == [
                "enter 2026-10-23T06:00:00.000Z [\"schedule\"]", "exit 2026-10-23T08:00:00.000Z [\"schedule\"]",
            ])
    }

    @Test func absentEventsAreStoredAndCounted() async throws {
        let store = try await TestStores.fresh()
        defer { TestStores.closeLater(store) }
        try await store.applyRegions([school(expectsInside: true)])
        // Monday 26 October (winter time): 2 km away at 06:55Z and 07:05Z.
        let summary = try await StoreInputs.ingest(
            store, [[fix(2000, at: "2026-10-26T06:55:00Z"), fix(2000, at: "2026-10-26T07:05:00Z")]])
        #expect(summary.events == [.absent: 1])
        var events: [String] = []
        try await store.forEachEvent(EventQuery(kind: "absent")) { events.append("\($0.kind) \($0.time)") }
        #expect(events == ["absent 2026-10-26T07:00:00.000Z"])
        #expect(try await visits(store).isEmpty)
    }

    @Test func anOverspeedKeepsItsMeasuresInTheStoreAndItsSyncPayload() async throws {
        let store = try await TestStores.fresh()
        defer { TestStores.closeLater(store) }
        try await store.applyRegions([
            Region(
                id: "zone", shape: .circle(center: projection.origin, radius: 500),
                settings: RegionSettings(speedLimit: 50))
        ])
        // Through the zone west to east, a fix a second: 10 m/s, then 20 m/s for 15 s, then 10.
        var x = -600.0
        var fixes = [fix(x, at: "2026-10-26T12:00:00Z")]
        for (speed, seconds) in [(10.0, 40), (20, 15), (10, 50)] {
            for _ in 0..<seconds {
                x += speed
                fixes.append(fix(x, at: "2026-10-26T12:00:00Z", plus: Double(fixes.count)))
            }
        }
        _ = try await StoreInputs.ingest(store, [fixes])
        var stored: [String] = []
        try await store.forEachEvent(EventQuery(kind: "overspeed")) { stored.append("\($0.time) \($0.properties)") }
        #expect(stored == [#"2026-10-26T12:00:41.000Z {"duration":15,"max_speed_kmh":72}"#])
        let payloads = try await store.claimPushBatch(limit: 100, maxBytes: 1 << 20).map(\.mutation.payload)
        let overspeed = try #require(payloads.first { $0.contains("\"overspeed\"") })
        #expect(overspeed.contains(#""properties":{"duration":15,"max_speed_kmh":72}"#), "\(overspeed)")
    }
}
