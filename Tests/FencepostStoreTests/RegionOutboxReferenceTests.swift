import FencepostCore
import FencepostGeometry
import FencepostServerTestSupport
import Testing

@testable import FencepostStore

/// A region apply's outbox rows refer to the region at their version instead of carrying a
/// copy of its feature (``OutboxPayload``): what sync sends and serves is still each version's
/// canonical feature, byte for byte, after the region has been updated, removed or replaced by
/// a pulled change since.
@Suite struct RegionOutboxReferenceTests {
    static func circle(_ id: String, radius: Double) -> Region {
        Region(id: id, shape: .circle(center: Position(lon: -8.62, lat: 52.66), radius: radius))
    }

    @Test func eachVersionIsSentAsItWasAppliedAfterLaterEdits() async throws {
        let store = try await TestStores.fresh()
        defer { TestStores.closeLater(store) }
        let first = Self.circle("a", radius: 30)
        let other = Self.circle("b", radius: 40)
        let second = Self.circle("a", radius: 99)
        try await store.applyRegions([first, other])
        try await store.applyRegions([second, other])
        try await store.applyRegions([second])

        let feed = try await store.syncChanges(after: 0, entities: [.region], device: nil, limit: 100)
        #expect(
            feed.map { "\($0.mutation.id) v\($0.mutation.version) \($0.mutation.op.rawValue)" } == [
                "a v1 upsert", "b v1 upsert", "a v2 upsert", "b v2 delete",
            ])
        #expect(
            feed.map(\.mutation.payload) == [
                first.canonicalFeatureText, other.canonicalFeatureText, second.canonicalFeatureText, "{}",
            ])
        // What a push claims is the same.
        let claimed = try await store.claimPushBatch(limit: 100, maxBytes: 1 << 20)
        #expect(claimed.map(\.mutation) == feed.map(\.mutation))
        // Only the row of a region's version still stored refers to it; the others hold their text.
        let references = try await store.read { tx in
            try await tx.rows("SELECT entity_id, version FROM outbox WHERE payload IS NULL ORDER BY seq")
        }
        #expect(references.map { "\($0["entity_id"] as String) v\($0["version"] as Int)" } == ["a v2"])
    }

    @Test func aPulledChangeKeepsTheTextOfTheVersionItReplaces() async throws {
        let store = try await TestStores.fresh()
        defer { TestStores.closeLater(store) }
        let first = Self.circle("a", radius: 30)
        try await store.applyRegions([first])
        let local = try await store.syncChanges(after: 0, entities: [.region], device: nil, limit: 100)
        // The local edit delivered, a newer version of the region pulled from the backend.
        let claimed = try await store.claimPushBatch(limit: 100, maxBytes: 1 << 20)
        try await store.acknowledge(claimed, results: [claimed[0].mutation.key: .applied])
        let pulled = Self.circle("a", radius: 77)
        let change = SyncChange(
            seq: 1,
            mutation: SyncMutation(
                key: "region:a:v2:0000000f", entity: .region, id: "a", op: .upsert, version: 2,
                payload: pulled.canonicalFeatureText))
        _ = try await store.applyPulledRegions([change], cursorKey: "pull.regions", cursor: 1)
        #expect(try await store.regions() == [pulled])

        let feed = try await store.syncChanges(after: 0, entities: [.region], device: nil, limit: 100)
        #expect(feed.map(\.mutation) == local.map(\.mutation))
        #expect(feed.map(\.mutation.payload) == [first.canonicalFeatureText])
    }

    /// The rows of regions an apply replaces get their text a few hundred regions per
    /// statement: 1,201 regions updated (and one removed) take three, every version still sent
    /// as it was applied.
    @Test func manyReplacedRegionsKeepTheirTextAcrossStatements() async throws {
        let store = try await TestStores.fresh()
        defer { TestStores.closeLater(store) }
        let ids = (0..<1_202).map { "r" + String(1_000_000 + $0).dropFirst() }
        let first = ids.map { Self.circle($0, radius: 30) }
        let second = ids.dropLast().map { Self.circle($0, radius: 31) }
        try await store.applyRegions(first)
        let plan = try await store.applyRegions(second)
        #expect(plan.summary == "0 to add, 1201 to update, 1 to remove, 0 unchanged")

        let feed = try await store.syncChanges(after: 0, entities: [.region], device: nil, limit: 10_000)
        #expect(
            feed.map(\.mutation.payload)
                == first.map(\.canonicalFeatureText) + second.map(\.canonicalFeatureText) + ["{}"])
        #expect(feed.map(\.mutation.version) == Array(repeating: 1, count: 1_202) + Array(repeating: 2, count: 1_202))
        let references: Int? = try await store.read { tx in
            try await tx.value("SELECT COUNT(*) FROM outbox WHERE payload IS NULL")
        }
        #expect(references == 1_201)
    }
}
