import FencepostCore
import FencepostGeometry
import FencepostIngest
import FencepostServerTestSupport
import FencepostStore
import Foundation
import Testing

/// A long-lived writer keeps at most ``IngestOptions/keptDevices`` devices' progress in memory;
/// a forgotten device resumes from the store as if nothing had been forgotten.
@Suite struct KeptDevicesTests {
    let grid = WalkGrid(origin: Position(lon: -8.62, lat: 52.66))

    /// 100 devices walking through the same circle, each posting its walk in 6 requests of 50
    /// fixes, in turn: device 0's first request, device 1's, ..., then every device's second.
    func run(keptDevices: Int?) async throws -> (events: [String], visits: [String], kept: Int) {
        let store = try await TestStores.fresh()
        defer { TestStores.closeLater(store) }
        try await store.applyRegions([grid.circle("middle", x: 0, radius: 50)])
        let session = try await IngestSession(store: store, options: IngestOptions(keptDevices: keptDevices))
        let walks = (0..<100).map { grid.walk(device: "walker-\($0)") }
        for part in 0..<6 {
            for walk in walks {
                let slice = walk[(part * 50)..<min(part * 50 + 50, walk.count)]
                // Groups of one request, as the live writer takes them when they come one by one.
                _ = try await session.ingest(batches: [Array(slice)])
            }
        }
        _ = try await session.ingest(batches: walks.map { Array($0[300...]) })
        var events: [String] = []
        try await store.forEachEvent(EventQuery()) { events.append("\($0.id) \($0.kind) \($0.device) \($0.time)") }
        var visits: [String] = []
        try await store.forEachVisit { visits.append("\($0.id) \($0.exitedAt ?? "open") \($0.exitReason ?? "")") }
        return (events.sorted(), visits.sorted(), session.keptDeviceCount)
    }

    @Test func aBoundedWriterForgetsTheLeastRecentlyUsedAndLosesNothing() async throws {
        let unbounded = try await run(keptDevices: nil)
        let bounded = try await run(keptDevices: 10)
        #expect(unbounded.kept == 100)
        #expect(bounded.kept <= 10)
        // Each walker enters at x = -50 and leaves at x = 50: 100 visits, 200 events, the same.
        #expect(unbounded.events.count == 200 && unbounded.visits.count == 100)
        #expect(bounded.events == unbounded.events)
        #expect(bounded.visits == unbounded.visits)
    }
}
