import FencepostCore
import FencepostServerTestSupport
import FencepostTestSupport
import Foundation
import Synchronization
import Testing

@testable import FencepostStore

/// The change feed with several writers at once (on PostgreSQL they really overlap): a consumer
/// that reads the outbox by `seq` and moves its cursor past what it read must, in the end, have
/// read every row exactly once. With `seq` taken when a row is inserted, a transaction that took
/// seq n and commits after one that took n + 1 would be passed for good.
@Suite struct ChangeFeedOrderTests {
    static let writers = 4
    static let transactionsPerWriter = 40

    @Test func aConsumerReadingBySeqWhileWritersOverlapMissesNothing() async throws {
        let store = try await TestStores.fresh()
        defer { TestStores.closeLater(store) }
        let consumed = Mutex<[(seq: Int64, id: String)]>([])
        let writing = Mutex(true)

        let consumer = Task {
            var cursor: Int64 = 0
            while true {
                let done = writing.withLock { !$0 }  // read before the page: a last full pass after the writers end
                let page = try await store.syncChanges(after: cursor, entities: nil, device: nil, limit: 7)
                consumed.withLock { $0 += page.map { ($0.seq, $0.mutation.id) } }
                cursor = page.last?.seq ?? cursor
                if page.isEmpty {
                    if done { return }
                    try await Task.sleep(for: .milliseconds(1))
                }
            }
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<Self.writers {
                group.addTask {
                    var random = SplitMix64(seed: UInt64(writer + 1))
                    for transaction in 0..<Self.transactionsPerWriter {
                        try await store.write { tx in
                            // Two rows with pauses around them: other writers' transactions
                            // begin and end inside this one.
                            for row in 0..<2 {
                                try await Task.sleep(for: .microseconds(Int(random.next() % 3_000)))
                                try await tx.enqueue(
                                    OutboxRow(
                                        entity: .region, id: "w\(writer)-t\(transaction)-r\(row)", op: .delete,
                                        version: 1,
                                        key: "w\(writer)-t\(transaction)-r\(row)", payload: "{}",
                                        createdAt: "2026-11-24T00:00:00.000Z"))
                            }
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        writing.withLock { $0 = false }
        try await consumer.value

        let all = try await store.syncChanges(after: 0, entities: nil, device: nil, limit: 1_000_000)
        let read = consumed.withLock { $0 }
        #expect(all.count == Self.writers * Self.transactionsPerWriter * 2)
        #expect(
            read.map(\.id) == all.map(\.mutation.id),
            "the consumer passed rows that committed after it read past their seq")
        #expect(Set(read.map(\.id)).count == read.count)
        // Each transaction's rows are next to each other and in the order they were added.
        for (first, second) in zip(all, all.dropFirst()) where first.mutation.id.hasSuffix("-r0") {
            #expect(second.mutation.id == first.mutation.id.dropLast() + "1" && second.seq == first.seq + 1)
        }
    }
}
