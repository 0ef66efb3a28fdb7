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
    @Test func aSetOfSeveralChunksIsWrittenWholeAndInOrder() async throws {
        let store = try await TestStores.fresh()
        defer { TestStores.closeLater(store) }
        let regions = (0..<20_000).map { index -> Region in
            let digits = String(index)
            let center = Position(lon: 8 + Double(index) * 1e-4, lat: 47.3)
            return Region(
                id: "r" + String(repeating: "0", count: 5 - digits.count) + digits,
                name: index % 2 == 0 ? "region \(index)" : nil,
                shape: .circle(center: center, radius: 20 + Double(index % 50)))
        }
        let plan = try await store.applyRegions(regions)
        #expect(plan.summary == "20000 to add, 0 to update, 0 to remove, 0 unchanged")
        #expect(try await store.monitoredRegions().map(\.region) == regions)
        // The regions alone (what a monitor is built from) are read the same way.
        #expect(try await store.regions() == regions)
        #expect(try await store.monitoredRegionsAndRevision().regions == regions)

        let outbox = try await store.read { tx in
            try await tx.rows(
                "SELECT entity_id, idempotency_key, payload FROM outbox WHERE entity = 'region' ORDER BY seq")
        }
        #expect(outbox.map { $0["entity_id"] as String } == regions.map(\.id))
        let hexDigits = Set("0123456789abcdef")
        for (row, region) in zip(outbox, regions) {
            let key: String = row["idempotency_key"]
            let prefix = "region:\(region.id):v1:"
            #expect(key.hasPrefix(prefix) && key.count == prefix.count + 8)
            #expect(key.dropFirst(prefix.count).allSatisfy { (digit: Character) in hexDigits.contains(digit) })
            #expect(row["payload"] as String == region.canonicalFeatureText)
        }
        #expect(Set(outbox.map { $0["idempotency_key"] as String }).count == regions.count)

        try await store.write { tx in
            try await tx.execute("UPDATE regions SET compact = ? WHERE id = 'r17000'", [.blob([1, 9])])
        }
        let error = await #expect(throws: StoreError.self) { try await store.monitoredRegions() }
        #expect(error.map { "\($0)".contains("stored region r17000 cannot be read") } == true)
        let alone = await #expect(throws: StoreError.self) { try await store.regions() }
        #expect(alone.map { "\($0)".contains("stored region r17000 cannot be read") } == true)
    }
}
