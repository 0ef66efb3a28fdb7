import FencepostCore
import FencepostGeometry
import FencepostIngest
import FencepostServerTestSupport
import FencepostStore
import FencepostTestSupport
import Foundation
import Testing

/// Deleting delivered outbox rows past their retention: what goes and what must stay.
@Suite struct OutboxCleanupTests {
    static let day = 86_400.0

    /// A store whose outbox holds 2 regions, 4 events and 4 visit versions: the first 6 rows
    /// delivered ten days ago, the next 2 an hour ago, the last 2 pending. A webhook's cursor
    /// was set before any event.
    func store() async throws -> (Store, old: [OutboxItem], recent: [OutboxItem]) {
        let grid = WalkGrid(origin: Position(lon: -8.62, lat: 52.66))
        let store = try await TestStores.fresh()
        try await store.applyRegions([grid.circle("a", x: -100, radius: 50), grid.circle("b", x: 150, radius: 40)])
        await #expect(try store.webhookCursor("hook") == 0)
        _ = try await StoreInputs.ingest(store, [grid.walk()])
        func deliver(_ count: Int, at date: Date) async throws -> [OutboxItem] {
            let items = try await store.claimPushBatch(limit: count, maxBytes: 1 << 20)
            try await store.acknowledge(
                items, results: Dictionary(uniqueKeysWithValues: items.map { ($0.mutation.key, .applied) }), at: date)
            return items
        }
        let old = try await deliver(6, at: Date().addingTimeInterval(-10 * Self.day))
        let recent = try await deliver(2, at: Date().addingTimeInterval(-3600))
        return (store, old, recent)
    }

    @Test func deliveredEventsAndVisitsPastTheRetentionGoOnceEveryWebhookHasThem() async throws {
        let (store, old, recent) = try await store()
        defer { TestStores.closeLater(store) }
        #expect(old.count == 6 && recent.count == 2)
        let counts = try await store.syncStatus().counts
        #expect(counts[.delivered] == 8 && counts[.pending] == 2)
        let weekAgo = Date().addingTimeInterval(-7 * Self.day)

        // The webhook has not had them yet: nothing goes.
        await #expect(try store.deleteDeliveredOutbox(before: weekAgo) == 0)
        // Once it has, the old delivered events and visits go; regions stay (a new backend
        // pulls them from the outbox), as do the recent deliveries and the pending rows.
        try await store.advanceWebhook("hook", to: recent.last!.seq + 2)
        let oldChanges = old.filter { $0.mutation.entity != .region }
        #expect(old.filter { $0.mutation.entity == .region }.count == 2 && oldChanges.count == 4)
        let before = try await store.syncChanges(after: 0, entities: nil, device: nil, limit: 100).map(\.seq)
        #expect(before.count == 10)
        await #expect(try store.deleteDeliveredOutbox(before: weekAgo) == oldChanges.count)
        let left = try await store.syncChanges(after: 0, entities: nil, device: nil, limit: 100).map(\.seq)
        #expect(left == before.filter { seq in !oldChanges.contains { $0.seq == seq } })
        await #expect(try store.syncStatus().counts[.pending] == 2)
        await #expect(try store.deleteDeliveredOutbox(before: weekAgo) == 0, "a second pass finds nothing")
        await #expect(
            try store.deleteDeliveredOutbox(before: Date().addingTimeInterval(1)) == 2,
            "a shorter retention takes the recent ones")
        await #expect(try store.syncStatus().counts[.pending] == 2)
    }

    @Test func aWebhookBehindKeepsWhatItHasNotHad() async throws {
        let (store, old, _) = try await store()
        defer { TestStores.closeLater(store) }
        // The webhook has had the outbox up to the third old row only.
        try await store.advanceWebhook("hook", to: old[2].seq)
        let expected = old.prefix(3).filter { $0.mutation.entity != .region }.count
        await #expect(try store.deleteDeliveredOutbox(before: Date().addingTimeInterval(-7 * Self.day)) == expected)
    }
}
