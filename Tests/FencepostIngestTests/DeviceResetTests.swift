import FencepostCore
import FencepostIngest
import FencepostServerTestSupport
import FencepostStore
import FencepostTestSupport
import Foundation
import Testing

/// `Store.resetDevice`: on both backends (tools/test runs the store's tests on PostgreSQL too).
@Suite struct DeviceResetTests {
    let base = IngestSessionTests()

    @Test(
        "a device poisoned by a far-future fix takes real fixes again after a reset; its open visit closes with reason reset"
    )
    func resetAfterPoison() async throws {
        let store = try await TestStores.fresh()
        defer { Task { await store.close() } }
        try await store.applyRegions([base.grid.circle("stop", x: 0, radius: 60)])
        let walk = base.grid.walk()
        // Into the circle, then a fix from 2099 that moves the anchor far ahead.
        var poisoned = Array(walk[0..<150])
        poisoned.append(base.grid.fix(0, t: 4_070_908_800 - 1_700_000_000))
        _ = try await base.ingest(store, [poisoned])
        let blocked = try await base.ingest(store, [Array(walk[150...])])
        #expect(blocked.dropped[.alreadySeen] == 151)

        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let reset = try await store.resetDevice("bus", at: now)
        #expect(reset.hadState && reset.visitsClosed == 1)
        #expect(reset.previousAnchor == 4_070_908_800)
        // Closed at the current time: the device's last fix lies in the future.
        let visits = try await base.visits(store)
        #expect(visits.count == 1)
        #expect(visits.first?.hasPrefix("stop 2023-11-14T22:15:") == true, "\(visits)")
        #expect(visits.first?.hasSuffix(" 2027-01-15T08:00:00.000Z reset") == true, "\(visits)")

        let again = try await base.ingest(store, [Array(walk[150...])])
        #expect(again.fixesAccepted == 151)
        #expect(try await store.resetDevice("nobody").hadState == false)
    }
}
