import FencepostCore
import FencepostGeometry
import FencepostIngest
import FencepostServerTestSupport
import FencepostStore
import Foundation
import Testing

/// Two writers ingesting fleet inputs that name the same devices in opposite orders, at once,
/// as two `fencepost ingest` processes of two fleet files do on PostgreSQL (SQLite has one
/// writer at a time). Locked as they came, each input's devices made a circle of waits: the
/// server aborted one ingest as a deadlock.
@Suite(.enabled(if: TestStores.onPostgres, "PostgreSQL only: SQLite has one writer at a time"))
struct ConcurrentFleetIngestTests {
    let grid = WalkGrid(origin: Position(lon: -8.62, lat: 52.66))
    static let devices = (0..<10).map { "van-\($0)" }

    /// Every device walking through the circle once, one after another in `order`: the first
    /// device's walk first in time, the next 400 s later.
    func fleet(_ order: [String], start: Double) -> [Fix] {
        order.enumerated().flatMap { slot, device in
            grid.walk(device: device).map { fix in
                var fix = fix
                fix.time += start + 400 * Double(slot)
                return fix
            }
        }
    }

    @Test(arguments: 0..<20)
    func twoFleetsNamingTheSameDevicesInOppositeOrdersBothCommit(run: Int) async throws {
        let url = try await TestStores.createDatabase(on: try #require(TestStores.postgresURL))
        let (first, second) = (try await Store.open(url), try await Store.open(url))
        defer { for store in [first, second] { TestStores.closeLater(store) } }
        try await first.applyRegions([grid.circle("depot", x: 0, radius: 50)])
        let forwards = fleet(Self.devices, start: 0)
        let backwards = fleet(Self.devices.reversed(), start: 10_000)

        async let one = Self.ingestRereadable(forwards, into: first)
        async let other = Self.ingestRereadable(backwards, into: second)
        let (a, b) = try await (one, other)
        #expect(a.fixesRead == forwards.count && b.fixesRead == backwards.count)

        // Whichever committed first, every device has its walks' visits, each closed once: the
        // later input's fixes of a device are either all after its anchor (a second visit) or
        // all at or before it (skipped), never a half of each.
        var visits: [String: Int] = [:]
        try await first.forEachVisit { visit in
            #expect(visit.exitedAt != nil)
            visits[visit.device, default: 0] += 1
        }
        #expect(visits.keys.sorted() == Self.devices.sorted())
        #expect(visits.values.allSatisfy { (1...2).contains($0) })
        #expect(visits.values.reduce(0, +) == a.visitsClosed + b.visitsClosed)
    }

    /// Ingests `fixes` as an input read again when asked, as a file is.
    static func ingestRereadable(_ fixes: [Fix], into store: Store) async throws -> IngestSummary {
        let session = try await IngestSession(store: store)
        try await session.ingest(rereading: {
            var iterator = fixes.makeIterator()
            return { iterator.next() }
        })
        return session.summary
    }
}
