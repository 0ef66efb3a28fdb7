import FencepostCore
import FencepostFormats
import FencepostIngest
import FencepostServerTestSupport
import FencepostStore
import FencepostTestSupport
import Foundation
import Testing

/// Retention per class (design, "history"): events_days and visits_days unset keep everything;
/// set, the prune deletes what is older, keeps what an outbox row not yet pushed still needs,
/// and queues nothing.
@Suite struct RetentionTests {
    @Test func eventsAndVisitsPastTheirRetentionGoOthersStay() async throws {
        let store = try await TestStores.fresh()
        defer { TestStores.closeLater(store) }
        try await BackendParityTests.fill(store)
        // The bus's journey is of 2019-02-18 (events 07:45 to 09:00 UTC); "now" is set so that
        // the events before 08:30 are older than 1 day.
        let now = Date(timeIntervalSince1970: Timestamp.parse("2019-02-19T08:30:00Z")!)
        func counts() async throws -> (events: Int, visits: Int, outbox: Int) {
            try await store.read { tx in
                (
                    Int(try await tx.value("SELECT COUNT(*) FROM events") ?? Int64(0)),
                    Int(try await tx.value("SELECT COUNT(*) FROM visits") ?? Int64(0)),
                    Int(try await tx.value("SELECT COUNT(*) FROM outbox") ?? Int64(0))
                )
            }
        }
        let before = try await counts()
        #expect(try await store.pruneEventsAndVisits(now: now) == (0, 0), "unset: kept for ever")

        try await store.setRetentionDays(.events, 1)
        try await store.setRetentionDays(.visits, 1)
        // Every outbox row still waits for sync push: nothing it refers to may go.
        #expect(try await store.pruneEventsAndVisits(now: now) == (0, 0))

        try await store.write { tx in try await tx.execute("UPDATE outbox SET status = 'delivered'", []) }
        let pruned = try await store.pruneEventsAndVisits(now: now)
        let after = try await counts()
        #expect(pruned.events > 0 && pruned.visits > 0)
        #expect(after.events == before.events - pruned.events)
        #expect(after.visits == before.visits - pruned.visits)
        #expect(after.outbox < before.outbox, "their outbox rows went with them")
        let left = try await store.read { tx in
            (
                try await tx.value("SELECT MIN(time_ms) FROM events") as Int64?,
                try await tx.value("SELECT COUNT(*) FROM visits WHERE status = 'open'") as Int64?
            )
        }
        let cutoff = Timestamp.milliseconds(Timestamp.parse("2019-02-18T08:30:00Z")!)
        #expect((left.0 ?? 0) >= cutoff, "no event older than a day is left")
        #expect(
            try await store.read { tx in
                try await tx.value("SELECT COUNT(*) FROM outbox WHERE op = 'delete' AND entity IN ('event', 'visit')")
                    as Int64?
            } == 0, "retention queues nothing")

        try await store.setRetentionDays(.events, nil)
        #expect(try await store.retentionDays(.events) == nil)
        #expect(try await store.retentionDays(.visits) == 1)
    }
}
