import FencepostCore
import FencepostGeometry
import FencepostIngest
import FencepostServerTestSupport
import FencepostStore
import Foundation
import Testing

/// Two ingests of fleet inputs that meet the same devices in other orders, at once, on
/// PostgreSQL: each takes a device's lock at its first fix, so they can wait for each other in
/// a circle; the server breaks that by aborting one, which is read again and goes through.
@Suite(.enabled(if: TestStores.onPostgres, "needs FENCEPOST_TEST_POSTGRES (tools/test's second run)"))
struct ConflictingIngestTests {
    let grid = WalkGrid(origin: Position(lon: -8.62, lat: 52.66))
    static let devices = (0..<40).map { "truck-\(String(format: "%02d", $0))" }

    /// Each device, in `order`, walks through home (x = 0, 50 m) from `start`: a device's fixes
    /// follow one another, so its first fix comes in `order`.
    func fleet(_ order: [String], start: Double) -> [Fix] {
        order.flatMap { device in
            grid.walk(device: device).map { fix in
                var moved = fix
                moved.time += start
                return moved
            }
        }
    }

    /// One input through a session of its own, read again from its start after a conflict.
    static func ingest(_ fixes: [Fix], into store: Store) async throws -> IngestSummary {
        let session = try await IngestSession(store: store)
        try await session.ingest(
            recording: nil,
            reopening: {
                var iterator = fixes.makeIterator()
                return { iterator.next() }
            })
        return session.summary
    }

    @Test func twoFleetInputsTakingTheSameDevicesInOtherOrdersBothGoThrough() async throws {
        let store = try await TestStores.fresh()
        let other = try await Store.open(store.location)
        try await store.applyRegions([grid.circle("home", x: 0, radius: 50)])
        for run in 0..<5 {
            let start = Double(run) * 10_000
            // The second input's walks come an hour after the first's: whichever commits first,
            // the second's fixes are newer than every device's anchor and are taken.
            async let first = Self.ingest(fleet(Self.devices, start: start), into: store)
            async let second = Self.ingest(fleet(Self.devices.reversed(), start: start + 3_600), into: other)
            let (_, later) = try await (first, second)
            #expect(later.events == [.enter: Self.devices.count, .exit: Self.devices.count])
        }
        var exits: [String: Int] = [:]
        try await store.forEachEvent(EventQuery(kind: "exit")) { exits[$0.device, default: 0] += 1 }
        // At least the later input's exit of every run, per device.
        #expect(Self.devices.allSatisfy { exits[$0, default: 0] >= 5 })
        await other.close()
        await store.close()
    }
}
