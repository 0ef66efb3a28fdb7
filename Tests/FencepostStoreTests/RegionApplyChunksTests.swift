import FencepostCore
import FencepostGeometry
import FencepostServerTestSupport
import Foundation
import Testing

@testable import FencepostStore

/// An apply of several chunks (each encoded while the one before is written) writes every
/// region and its outbox row, in id order, each row keyed by an edit of its own; the regions
/// read back in batches (each read while the next is fetched) are the same, in the same order,
/// with their versions or alone, and a corrupt one in a later batch is named.
@Suite struct RegionApplyChunksTests {
    /// Circles `r00000`, `r00001`, ... in id order, every other one named.
    static func regions(_ count: Int) -> [Region] {
        (0..<count).map { index -> Region in
            let digits = String(index)
            let center = Position(lon: 8 + Double(index) * 1e-4, lat: 47.3)
            return Region(
                id: "r" + String(repeating: "0", count: 5 - digits.count) + digits,
                name: index % 2 == 0 ? "region \(index)" : nil,
                shape: .circle(center: center, radius: 20 + Double(index % 50)))
        }
    }

    @Test func aSetOfSeveralChunksIsWrittenWholeAndInOrder() async throws {
        let store = try await TestStores.fresh()
        defer { TestStores.closeLater(store) }
        let regions = Self.regions(20_000)
        let plan = try await store.applyRegions(regions)
        #expect(plan.summary == "20000 to add, 0 to update, 0 to remove, 0 unchanged")
        #expect(try await store.monitoredRegions().map(\.region) == regions)
        // The regions alone (what a monitor is built from) are read the same way.
        #expect(try await store.regions() == regions)
        #expect(try await store.monitoredRegionsAndRevision().regions == regions)

        // What sync sends: each row's payload is the region's canonical feature (rendered from
        // the region's row, which its outbox row refers to).
        let outbox = try await store.syncChanges(after: 0, entities: [.region], device: nil, limit: 100_000)
        #expect(outbox.map(\.mutation.id) == regions.map(\.id))
        let hexDigits = Set("0123456789abcdef")
        for (change, region) in zip(outbox, regions) {
            let key = change.mutation.key
            let prefix = "region:\(region.id):v1:"
            #expect(key.hasPrefix(prefix) && key.count == prefix.count + 8)
            #expect(key.dropFirst(prefix.count).allSatisfy { (digit: Character) in hexDigits.contains(digit) })
            #expect(change.mutation.payload == region.canonicalFeatureText)
            #expect(change.mutation.version == 1 && change.mutation.op == .upsert)
        }
        #expect(Set(outbox.map(\.mutation.key)).count == regions.count)

        try await store.write { tx in
            try await tx.execute("UPDATE regions SET compact = ? WHERE id = 'r17000'", [.blob([1, 9])])
        }
        let error = await #expect(throws: StoreError.self) { try await store.monitoredRegions() }
        #expect(error.map { "\($0)".contains("stored region r17000 cannot be read") } == true)
        let alone = await #expect(throws: StoreError.self) { try await store.regions() }
        #expect(alone.map { "\($0)".contains("stored region r17000 cannot be read") } == true)
    }

    /// A write refused in a later chunk (the database's own error, from a statement bound and
    /// stepped through SQLite's C API on SQLite) rolls back every chunk written before it: no
    /// region, no outbox row, and the same set applies whole afterwards.
    @Test func aRegionRefusedInALaterChunkRollsBackTheWholeApply() async throws {
        let store = try await TestStores.fresh()
        defer { TestStores.closeLater(store) }
        let regions = Self.regions(10_000)
        try await TestStores.refuseInserts(in: store, into: "regions", when: "NEW.id = 'r09000'")
        let error = await #expect(throws: (any Error).self) { try await store.applyRegions(regions) }
        #expect("\(String(describing: error))".contains("injected failure"))
        await #expect(try store.regionDigests().isEmpty)
        let outbox: Int? = try await store.read { tx in try await tx.value("SELECT COUNT(*) FROM outbox") }
        #expect(outbox == 0)
        await #expect(try store.regionsRevision() == 0)

        try await TestStores.allowInserts(in: store, into: "regions")
        let plan = try await store.applyRegions(regions)
        #expect(plan.summary == "10000 to add, 0 to update, 0 to remove, 0 unchanged")
        #expect(try await store.regions() == regions)
    }
}
