import FencepostCore
import FencepostStore
import Foundation
import Testing

/// Deleting delivered outbox rows past their retention: what goes and what must stay.
@Suite struct OutboxCleanupTests {
    static let day = 86_400.0

    /// A store whose outbox holds 2 regions, 4 events and 4 visit versions: the first 6 rows
    /// delivered ten days ago, the next 2 an hour ago, the last 2 pending. A webhook's cursor
    /// was set before any event.
    func store() throws -> (Store, old: [OutboxItem], recent: [OutboxItem]) {
        let grid = IngestSessionTests().grid
        let store = try Store.inMemory()
        try store.applyRegions([grid.circle("a", x: -100, radius: 50), grid.circle("b", x: 150, radius: 40)])
        #expect(try store.webhookCursor("hook") == 0)
        _ = try IngestSessionTests().ingest(store, [grid.walk()])
        func deliver(_ count: Int, at date: Date) throws -> [OutboxItem] {
            let items = try store.claimPushBatch(limit: count, maxBytes: 1 << 20)
            try store.acknowledge(items, results: Dictionary(uniqueKeysWithValues: items.map { ($0.mutation.key, .applied) }), at: date)
            return items
        }
        let old = try deliver(6, at: Date().addingTimeInterval(-10 * Self.day))
        let recent = try deliver(2, at: Date().addingTimeInterval(-3600))
        return (store, old, recent)
    }

    @Test func deliveredEventsAndVisitsPastTheRetentionGoOnceEveryWebhookHasThem() throws {
        let (store, old, recent) = try store()
        #expect(old.count == 6 && recent.count == 2)
        #expect(try store.syncStatus().counts["delivered"] == 8 && store.syncStatus().counts["pending"] == 2)
        let weekAgo = Date().addingTimeInterval(-7 * Self.day)

        // The webhook has not had them yet: nothing goes.
        #expect(try store.deleteDeliveredOutbox(before: weekAgo) == 0)
        // Once it has, the old delivered events and visits go; regions stay (a new backend
        // pulls them from the outbox), as do the recent deliveries and the pending rows.
        try store.advanceWebhook("hook", to: recent.last!.seq + 2)
        let oldChanges = old.filter { $0.mutation.entity != "region" }
        #expect(old.filter { $0.mutation.entity == "region" }.count == 2 && oldChanges.count == 4)
        let before = try store.syncChanges(after: 0, entities: nil, device: nil, limit: 100).map(\.seq)
        #expect(before.count == 10)
        #expect(try store.deleteDeliveredOutbox(before: weekAgo) == oldChanges.count)
        let left = try store.syncChanges(after: 0, entities: nil, device: nil, limit: 100).map(\.seq)
        #expect(left == before.filter { seq in !oldChanges.contains { $0.seq == seq } })
        #expect(try store.syncStatus().counts["pending"] == 2)
        #expect(try store.deleteDeliveredOutbox(before: weekAgo) == 0, "a second pass finds nothing")
        #expect(try store.deleteDeliveredOutbox(before: Date().addingTimeInterval(1)) == 2, "a shorter retention takes the recent ones")
        #expect(try store.syncStatus().counts["pending"] == 2)
    }

    @Test func aWebhookBehindKeepsWhatItHasNotHad() throws {
        let (store, old, _) = try store()
        // The webhook has had the outbox up to the third old row only.
        try store.advanceWebhook("hook", to: old[2].seq)
        let expected = old.prefix(3).filter { $0.mutation.entity != "region" }.count
        #expect(try store.deleteDeliveredOutbox(before: Date().addingTimeInterval(-7 * Self.day)) == expected)
    }
}
