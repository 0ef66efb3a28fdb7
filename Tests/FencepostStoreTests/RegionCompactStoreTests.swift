import FencepostCore
import FencepostGeometry
import FencepostServerTestSupport
import Foundation
import GRDB
import Testing

@testable import FencepostStore

/// Regions are stored with their compact form beside the canonical feature, and read back from
/// it as the feature reads back; rows without one (written before migration v18) are read from
/// their feature, and a store migrated from the schema before serves the same regions.
@Suite struct RegionCompactStoreTests {
    static let features = [
        #"{"type":"Feature","geometry":{"type":"Point","coordinates":[8.5417,47.3769]},"properties":{"id":"circle","radius":150,"name":"Paradeplatz"}}"#,
        #"{"type":"Feature","geometry":{"type":"Polygon","coordinates":[[[8.5,47.37],[8.52,47.37],[8.52,47.39],[8.5,47.39],[8.5,47.37]],[[8.505,47.375],[8.506,47.375],[8.506,47.376],[8.505,47.375]]]},"properties":{"id":"holed","hysteresis":0,"dwell":600,"devices":["truck-*"],"colour":{"fill":"red"}}}"#,
        #"{"type":"Feature","geometry":{"type":"MultiPolygon","coordinates":[[[[1.1,2.2],[1.3,2.2],[1.3,2.4],[1.1,2.2]]],[[[3.1,4.1],[3.3,4.1],[3.3,4.3],[3.1,4.1]]]]},"properties":{"id":"islands","enabled":false,"layer":"l"}}"#,
        #"{"type":"Feature","geometry":{"type":"LineString","coordinates":[[8.5,47.37],[8.51,47.372],[8.52,47.371]]},"properties":{"id":"route","buffer":40}}"#,
    ]

    static func regions() throws -> [Region] {
        try Self.features.map { try RegionConfigParser().region(fromFeature: Data($0.utf8), source: "test") }
    }

    @Test func regionsReadBackTheSameFromTheCompactFormAndFromTheFeature() async throws {
        let store = try await TestStores.fresh()
        defer { TestStores.closeLater(store) }
        let regions = try Self.regions()
        try await store.applyRegions(regions)
        let stored = try await store.read { tx in
            try await tx.rows("SELECT id, compact FROM regions ORDER BY id").map { $0["compact"] as [UInt8]? }
        }
        #expect(stored.allSatisfy { $0 != nil })
        let fromCompact = try await store.monitoredRegions()
        #expect(fromCompact.map(\.region) == regions.sorted { $0.id < $1.id })

        // Rows as a store before migration v18 holds them: read from the feature, the same.
        try await store.write { tx in try await tx.execute("UPDATE regions SET compact = NULL", []) }
        #expect(try await store.monitoredRegions() == fromCompact)
        #expect(try await store.planRegions(regions).isEmpty)
    }

    @Test func aStoreMigratedFromTheSchemaBeforeServesTheSameRegions() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fencepost-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent("store.db").path
        let regions = try Self.regions().sorted { $0.id < $1.id }

        // The regions as the release before v18 wrote them: the feature and its hashes only.
        let older = try DatabaseQueue(path: path)
        try SQLiteBackend.migrator.migrate(older, upTo: "v17-region-sources")
        try await older.write { db in
            for region in regions {
                let (feature, contentHash) = region.canonicalFeatureAndHash
                let bounds = region.shape.bounds
                try db.execute(
                    sql: """
                        INSERT INTO regions (id, name, kind, enabled, feature, content_hash, geometry_hash, version,
                            min_lon, min_lat, max_lon, max_lat, created_at, updated_at)
                        VALUES (?, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?, ?, '2026-11-01T00:00:00.000Z', '2026-11-01T00:00:00.000Z')
                        """,
                    arguments: [
                        region.id, region.name, region.shape.kind, region.settings.enabled, feature, contentHash,
                        region.geometryHash, bounds.minX, bounds.minY, bounds.maxX, bounds.maxY,
                    ])
            }
        }
        try older.close()

        let store = try Store(path: path)
        let migrated = try await store.monitoredRegions()
        #expect(migrated.map(\.region) == regions)
        #expect(migrated.allSatisfy { $0.version == 1 && $0.createdAt == "2026-11-01T00:00:00.000Z" })
        #expect(try await store.planRegions(regions).isEmpty)

        // The first apply gives every row its compact form (the edited region's from the
        // edit); every region still reads back as applied.
        var edited = regions
        edited[0].name = "renamed"
        let plan = try await store.applyRegions(edited)
        #expect(plan.summary == "0 to add, 1 to update, 0 to remove, 3 unchanged")
        let compact = try await store.read { tx in
            try await tx.rows("SELECT id FROM regions WHERE compact IS NOT NULL").map { $0["id"] as String }
        }
        #expect(compact == edited.map(\.id))
        #expect(try await store.monitoredRegions().map(\.region) == edited)
    }
}
