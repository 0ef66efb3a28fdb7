import FencepostCore
import FencepostServerTestSupport
import Foundation
import Testing

@testable import FencepostStore

/// On PostgreSQL, a transaction with more outbox rows than it keeps in memory (they wait in a
/// temporary table) takes their numbers from the outbox's sequence at once, at its commit: the
/// rows are numbered in the order they were added, after every row committed before, and
/// whatever commits next is numbered after them, writers overlapping or not.
@Suite(.enabled(if: TestStores.onPostgres, "needs FENCEPOST_TEST_POSTGRES (tools/test's second run)"))
struct PostgresOutboxNumberingTests {
    /// More rows than a transaction keeps in memory.
    static let big = 12_345

    static func row(_ id: String, key: String? = nil) -> OutboxRow {
        OutboxRow(entity: .event, id: id, version: 1, key: key, createdAt: "2026-11-26T00:00:00.000Z")
    }

    static func enqueue(_ ids: [String], keyed: Bool = false, in store: Store) async throws {
        try await store.write { tx in
            for id in ids { try await tx.enqueue(row(id, key: keyed ? "key-" + id : nil)) }
        }
    }

    static func outbox(_ store: Store) async throws -> [(seq: Int64, id: String)] {
        try await store.read { tx in
            try await tx.rows("SELECT seq, entity_id FROM outbox ORDER BY seq").map { ($0["seq"], $0["entity_id"]) }
        }
    }

    @Test func aBigTransactionsRowsAreNumberedInOrderBetweenTheRowsBeforeAndAfter() async throws {
        let store = try await TestStores.fresh()
        defer { TestStores.closeLater(store) }
        try await Self.enqueue(["before-0", "before-1", "before-2"], in: store)
        let bigIDs = (0..<Self.big).map { "big-\($0)" }
        try await Self.enqueue(bigIDs, in: store)
        try await Self.enqueue(["after"], in: store)

        let rows = try await Self.outbox(store)
        #expect(rows.map(\.id) == ["before-0", "before-1", "before-2"] + bigIDs + ["after"])
        let first = rows[0].seq
        #expect(rows.map(\.seq) == Array(first..<first + Int64(rows.count)))
    }

    @Test func aBigTransactionsRowsWhoseKeysAreStoredLeaveTheirNumbersUnused() async throws {
        let store = try await TestStores.fresh()
        defer { TestStores.closeLater(store) }
        try await Self.enqueue(["k-5", "k-6"], keyed: true, in: store)
        let bigIDs = (0..<Self.big).map { "k-\($0)" }
        try await Self.enqueue(bigIDs, keyed: true, in: store)
        try await Self.enqueue(["after"], in: store)

        let rows = try await Self.outbox(store)
        let expected = ["k-5", "k-6"] + bigIDs.filter { $0 != "k-5" && $0 != "k-6" } + ["after"]
        #expect(rows.map(\.id) == expected)
        // The big transaction's numbers follow the rows before, one for each row it added,
        // stored or not (k-5 and k-6 were its sixth and seventh): two gaps, then the next row.
        let big = rows.dropFirst(2).dropLast()
        let start = rows[1].seq + 1
        #expect(big.map(\.seq) == (0..<Int64(Self.big)).filter { $0 != 5 && $0 != 6 }.map { start + $0 })
        #expect(rows.last?.seq == start + Int64(Self.big))
    }

    @Test func aKeyComingTwiceInABigTransactionKeepsItsFirstRow() async throws {
        let store = try await TestStores.fresh()
        defer { TestStores.closeLater(store) }
        try await store.write { tx in
            for index in 0..<Self.big {
                try await tx.enqueue(Self.row("row-\(index)", key: "key-\(index % (Self.big - 100))"))
            }
        }
        let rows = try await Self.outbox(store)
        #expect(rows.map(\.id) == (0..<Self.big - 100).map { "row-\($0)" })
    }

    @Test func smallTransactionsCommittingBesideABigOneAreNumberedBeforeOrAfterItsRows() async throws {
        let store = try await TestStores.fresh()
        defer { TestStores.closeLater(store) }
        let bigIDs = (0..<Self.big).map { "big-\($0)" }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await Self.enqueue(bigIDs, in: store) }
            for writer in 0..<3 {
                group.addTask {
                    for transaction in 0..<20 {
                        try await Self.enqueue(["small-\(writer)-\(transaction)"], in: store)
                    }
                }
            }
            try await group.waitForAll()
        }
        let rows = try await Self.outbox(store)
        #expect(rows.count == Self.big + 60)
        #expect(Set(rows.map(\.seq)).count == rows.count)
        // The big transaction's rows in order and together: no small one numbered among them.
        let firstBig = try #require(rows.firstIndex { $0.id == "big-0" })
        #expect(rows[firstBig..<firstBig + Self.big].map(\.id) == bigIDs)
        let seqs = rows[firstBig..<firstBig + Self.big].map(\.seq)
        #expect(seqs == Array(seqs[0]..<seqs[0] + Int64(Self.big)))
        // Each writer's rows in the order it committed them.
        for writer in 0..<3 {
            let mine = rows.map(\.id).filter { $0.hasPrefix("small-\(writer)-") }
            #expect(mine == (0..<20).map { "small-\(writer)-\($0)" })
        }
    }
}
