import FencepostCore
import FencepostGeometry
import FencepostIngest
import FencepostServerTestSupport
import FencepostStore
import FencepostTestSupport
import Foundation
import Testing

/// Both sides of sync on real stores: a client's outbox applied to a backend store, the queue's
/// states, and pulled regions.
@Suite struct SyncStoreTests {
    let grid = WalkGrid(origin: Position(lon: -8.62, lat: 52.66))

    /// A client store with two regions and a walk through both (4 events, 2 visits twice).
    func client(device: String = "bus") async throws -> Store {
        let store = try await TestStores.fresh()
        try await store.applyRegions([grid.circle("a", x: -100, radius: 50), grid.circle("b", x: 150, radius: 40)])
        _ = try await StoreInputs.ingest(store, [grid.walk(device: device)])
        return store
    }

    /// Every outbox mutation of `store`, in order.
    func mutations(_ store: Store, entities: Set<SyncEntity>? = nil) async throws -> [SyncMutation] {
        try await store.syncChanges(after: 0, entities: entities, device: nil, limit: 100_000).map(\.mutation)
    }

    func rows(_ store: Store) async throws -> (events: [String], visits: [String]) {
        var events: [String] = []
        try await store.forEachEvent(EventQuery()) {
            events.append("\($0.id) \($0.kind) \($0.device) \($0.region ?? "") \($0.time) \($0.flags) \($0.properties)")
        }
        var visits: [String] = []
        try await store.forEachVisit {
            visits.append("\($0.id) \($0.region) \($0.enteredAt) \($0.exitedAt ?? "open") \($0.status) v\($0.version)")
        }
        return (events, visits)
    }

    @Test func appliedOncePerKeyAndTheBackendHoldsTheClientsRows() async throws {
        let client = try await client()
        defer { TestStores.closeLater(client) }
        let backend = try await TestStores.fresh()
        defer { TestStores.closeLater(backend) }
        let batch = try await mutations(client)
        #expect(batch.count == 10)  // 2 regions, 4 events, 2 visits opened and then closed
        let admin = SyncPermissions(device: nil, regions: true)
        await #expect(try backend.applyMutations(batch, permissions: admin) == Array(repeating: .applied, count: 10))
        await #expect(try rows(backend) == rows(client))
        await #expect(try backend.monitoredRegions().map(\.region.id) == ["a", "b"])

        // The same batch again (a lost answer): every key is a duplicate, nothing changes.
        let outboxBefore = try await mutations(backend).count
        await #expect(try backend.applyMutations(batch, permissions: admin) == Array(repeating: .duplicate, count: 10))
        await #expect(try rows(backend) == rows(client))
        await #expect(try mutations(backend).count == outboxBefore)
    }

    @Test func aRegionRemovedWithAVisitOpenConvergesOnTheBackend() async throws {
        // The walk ends inside "b": its visit is open when the client removes "b".
        let client = try await TestStores.fresh()
        defer { TestStores.closeLater(client) }
        try await client.applyRegions([grid.circle("a", x: -100, radius: 50), grid.circle("b", x: 300, radius: 40)])
        _ = try await StoreInputs.ingest(client, [grid.walk()])
        try await client.applyRegions([grid.circle("a", x: -100, radius: 50)])
        await #expect(try rows(client).visits.contains { $0.contains(" closed v2") && $0.contains(" b ") })

        // The backend applies the region delete (which must not close the pushed visit itself)
        // and then the client's own close: both stores end the same.
        let backend = try await TestStores.fresh()
        defer { TestStores.closeLater(backend) }
        let results = try await backend.applyMutations(
            try mutations(client), permissions: SyncPermissions(device: nil, regions: true))
        #expect(results.allSatisfy { $0 == .applied })
        await #expect(try rows(backend) == rows(client))
    }

    @Test func anOlderVersionDoesNotOverwriteANewerOne() async throws {
        let client = try await client()
        defer { TestStores.closeLater(client) }
        let backend = try await TestStores.fresh()
        defer { TestStores.closeLater(backend) }
        let visits = try await mutations(client, entities: [.visit])
        let closed = visits.filter { $0.version == 2 }
        let opened = visits.filter { $0.version == 1 }
        let admin = SyncPermissions(device: nil, regions: true)
        // The closes arrive first (out of order); the opens after them change nothing.
        await #expect(try backend.applyMutations(closed, permissions: admin) == [.applied, .applied])
        await #expect(try backend.applyMutations(opened, permissions: admin) == [.applied, .applied])
        await #expect(try rows(backend).visits == rows(client).visits)
    }

    @Test func rejectionsNameTheirReasonAndAreNotRemembered() async throws {
        let client = try await client(device: "phone")
        defer { TestStores.closeLater(client) }
        let backend = try await TestStores.fresh()
        defer { TestStores.closeLater(backend) }
        let events = try await mutations(client, entities: [.event])
        var broken = events[0]
        broken.payload = #"{"device":"phone","id":"\#(broken.id)","kind":"enter"}"#  // no time
        let device = SyncPermissions(device: "phone", regions: false)
        let other = SyncPermissions(device: "other", regions: false)

        let results = try await backend.applyMutations([broken, events[1]], permissions: device)
        #expect(results == [.rejected(reason: "the payload has no time"), .applied])
        await #expect(
            try backend.applyMutations([events[2]], permissions: other) == [
                .rejected(reason: "this token may sync only device other's data, not phone's")
            ])
        let region = try await mutations(client, entities: [.region])[0]
        await #expect(
            try backend.applyMutations([region], permissions: device) == [
                .rejected(reason: "regions can only be changed with an admin token")
            ])
        await #expect(try rows(backend).events.count == 1)

        // Fixed (the original payload), the same key applies: the rejection was not remembered.
        await #expect(try backend.applyMutations([events[0]], permissions: device) == [.applied])
    }

    @Test func regionEditsAreQueuedAndDeletesCarryTheirOwnKey() async throws {
        let store = try await TestStores.fresh()
        defer { TestStores.closeLater(store) }
        try await store.applyRegions([grid.circle("a", x: 0, radius: 50)])
        try await store.applyRegions([grid.circle("a", x: 0, radius: 60)])
        try await store.applyRegions([])
        try await store.applyRegions([grid.circle("a", x: 0, radius: 50)])
        let queued = try await mutations(store)
        #expect(
            queued.map { "\($0.op.rawValue) v\($0.version)" } == ["upsert v1", "upsert v2", "delete v3", "upsert v1"])
        #expect(Set(queued.map(\.key)).count == 4)  // the re-added region is a new edit, not a duplicate

        // Replayed on a backend in order, the last edit wins.
        let backend = try await TestStores.fresh()
        defer { TestStores.closeLater(backend) }
        await #expect(
            try backend.applyMutations(queued, permissions: SyncPermissions(device: nil, regions: true)).allSatisfy {
                $0 == .applied
            })
        await #expect(
            try backend.monitoredRegions().map(\.region.contentHash)
                == store.monitoredRegions().map(\.region.contentHash))
    }

    @Test func theQueueClaimsAcknowledgesRetriesAndDeadLetters() async throws {
        let store = try await client()
        defer { TestStores.closeLater(store) }
        let first = try await store.claimPushBatch(limit: 4, maxBytes: 1 << 20)
        #expect(first.map(\.seq) == [1, 2, 3, 4])
        await #expect(try store.syncStatus().counts[.inflight] == 4)

        // A push killed here leaves them in flight; the next push requeues them first.
        await #expect(try store.requeueInflight() == 4)
        let again = try await store.claimPushBatch(limit: 4, maxBytes: 1 << 20)
        #expect(again.map(\.seq) == [1, 2, 3, 4])

        // One acknowledged, one rejected, one duplicate, one without an answer.
        let results: [String: SyncResult] = [
            again[0].mutation.key: .applied, again[1].mutation.key: .rejected(reason: "no such region"),
            again[2].mutation.key: .duplicate,
        ]
        let outcome = try await store.acknowledge(again, results: results)
        #expect(outcome.delivered == 2 && outcome.dead == 1)
        let status = try await store.syncStatus()
        #expect(status.counts == [.pending: 7, .inflight: 0, .delivered: 2, .dead: 1])
        #expect(status.lastSuccessAt != nil)
        await #expect(try store.syncDeadLetters().map(\.lastError) == ["rejected: no such region"])

        // Failures that reached the backend count; an unreachable backend does not.
        let next = try await store.claimPushBatch(limit: 2, maxBytes: 1 << 20)
        #expect(next.map(\.seq) == [4, 5])
        await #expect(
            try store.recordPushFailure(
                next, error: "connection refused", counts: false, maxAttempts: 1, retryAt: Date()) == 0)
        let retried = try await store.claimPushBatch(limit: 2, maxBytes: 1 << 20)
        await #expect(
            try store.recordPushFailure(retried, error: "HTTP 503", counts: true, maxAttempts: 1, retryAt: Date()) == 2)
        await #expect(try store.syncStatus().lastError == "HTTP 503")
        await #expect(try store.syncDeadLetters().map(\.seq) == [2, 4, 5])

        await #expect(try store.retryDeadLetters(seq: 2) == 1)
        await #expect(try store.retryDeadLetters() == 2)
        await #expect(try store.syncStatus().counts[.dead] == 0)
        await #expect(try store.claimPushBatch(limit: 100, maxBytes: 1 << 20).map(\.seq) == [2, 4, 5, 6, 7, 8, 9, 10])
    }

    @Test func pulledRegionsGoThroughTheReconcilerAndNeverUndoAPendingLocalDelete() async throws {
        let backend = try await TestStores.fresh()
        defer { TestStores.closeLater(backend) }
        try await backend.applyRegions([
            grid.circle("a", x: 0, radius: 50), grid.circle("b", x: 200, radius: 50),
            grid.circle("c", x: 400, radius: 50),
        ])

        let edge = try await TestStores.fresh()
        defer { TestStores.closeLater(edge) }
        try await edge.applyRegions([grid.circle("b", x: 200, radius: 50)])
        // The edge deletes b locally; the delete waits in its outbox.
        try await edge.applyRegions([])
        let feed = try await backend.syncChanges(after: 0, entities: [.region], device: nil, limit: 100)
        let pulled = try await edge.applyPulledRegions(feed, cursorKey: "pull.cursor test", cursor: feed.last!.seq)
        #expect(pulled.keptLocal == ["b"])
        #expect(pulled.plan.addCount == 2)
        await #expect(try edge.monitoredRegions().map(\.region.id) == ["a", "c"])
        await #expect(try edge.syncState("pull.cursor test") == String(feed.last!.seq))
        // Pulled regions are not queued back: the edge's outbox still holds only its own edits.
        await #expect(try mutations(edge).map(\.op) == [.upsert, .delete])

        // Once the delete has been pushed (delivered), a later pull may bring b back.
        let claimed = try await edge.claimPushBatch(limit: 10, maxBytes: 1 << 20)
        try await edge.acknowledge(
            claimed, results: Dictionary(uniqueKeysWithValues: claimed.map { ($0.mutation.key, SyncResult.applied) }))
        _ = try await edge.applyPulledRegions(feed, cursorKey: "pull.cursor test", cursor: feed.last!.seq)
        await #expect(try edge.monitoredRegions().map(\.region.id) == ["a", "b", "c"])
    }

    // MARK: - Batches written a few statements at a time

    /// A made-up event mutation: device `bus`, text a statement must carry as it is, and no
    /// position for every third one.
    func madeUpEvent(_ number: Int, version: Int = 1, note: String = "") -> SyncMutation {
        let id = "e-\(number)"
        var fields: [String: JSONValue] = [
            "id": .string(id), "kind": .string(number % 2 == 0 ? "enter" : "exit"), "device": .string("bus"),
            "region": .string("a"), "visit_id": .string("v-\(number / 2)"),
            "time": .string(Timestamp.format(milliseconds: 1_750_000_000_000 + Int64(number) * 1_000)),
            "flags": .array(number % 5 == 0 ? [.string("pass")] : []),
            "properties": .object([
                "note": .string("tab\there, line\nbreak, back\\slash, 'quote', \"double\", ünïcødé 🚌 \(note)\(number)")
            ]),
        ]
        if number % 3 != 0 {
            fields["lat"] = .number(52.66 + Double(number) / 1e6)
            fields["lon"] = .number(-8.62)
        }
        return SyncMutation(
            key: "event:\(id):v\(version)", entity: .event, id: id, op: .upsert, version: version,
            payload: JSONValue.object(fields).canonicalText())
    }

    /// A made-up visit mutation of device `bus` in region `a`: open at version 1, closed at 2.
    func madeUpVisit(_ id: String, version: Int) -> SyncMutation {
        var fields: [String: JSONValue] = [
            "id": .string(id), "device": .string("bus"), "region": .string("a"),
            "entered_at": .string("2025-06-01T06:00:00.000Z"), "status": .string(version == 1 ? "open" : "closed"),
        ]
        if version > 1 {
            fields["exited_at"] = .string("2025-06-01T06:30:00.250Z")
            fields["exit_reason"] = .string("exit")
        }
        return SyncMutation(
            key: "visit:\(id):v\(version)", entity: .visit, id: id, op: .upsert, version: version,
            payload: JSONValue.object(fields).canonicalText())
    }

    func storedRows(_ store: Store) async throws -> (events: [EventRow], visits: [VisitRow]) {
        var events: [EventRow] = []
        try await store.forEachEvent(EventQuery()) { events.append($0) }
        var visits: [VisitRow] = []
        try await store.forEachVisit { visits.append($0) }
        return (events, visits)
    }

    @Test func aBatchLeavesWhatItsMutationsOneAtATimeLeave() async throws {
        // More events than one statement writes, some sent twice (a newer version, an older
        // one after it); visits opened and closed in the batch, closed before their open
        // arrives, and stored before the batch; a region edit and a visit delete among them.
        var batch = (0..<2_600).map { madeUpEvent($0) }
        batch += [madeUpEvent(7, version: 2, note: "second "), madeUpEvent(9, version: 3), madeUpEvent(9, version: 2)]
        batch += [madeUpVisit("v-open-close", version: 1), madeUpVisit("v-open-close", version: 2)]
        batch += [madeUpVisit("v-close-open", version: 2), madeUpVisit("v-close-open", version: 1)]
        batch.insert(madeUpVisit("v-stored", version: 2), at: 1_200)
        batch.insert(madeUpVisit("v-deleted", version: 1), at: 100)
        var delete = madeUpVisit("v-deleted", version: 2)
        delete.op = .delete
        delete.key = "visit:v-deleted:v2:delete"
        batch.insert(delete, at: 1_500)
        batch.insert(madeUpEvent(3_000), at: 1_501)
        let source = try await client()
        defer { TestStores.closeLater(source) }
        let region = try await mutations(source, entities: [.region])[0]
        batch.insert(region, at: 2_000)

        let admin = SyncPermissions(device: nil, regions: true)
        var stores: [Store] = []
        for _ in 0..<2 {
            let store = try await TestStores.fresh()
            await #expect(
                try store.applyMutations([madeUpVisit("v-stored", version: 1)], permissions: admin) == [.applied])
            stores.append(store)
        }
        defer { stores.forEach(TestStores.closeLater) }
        let whole = try await stores[0].applyMutations(batch, permissions: admin)
        var oneAtATime: [SyncResult] = []
        for mutation in batch { oneAtATime += try await stores[1].applyMutations([mutation], permissions: admin) }
        #expect(whole == Array(repeating: .applied, count: batch.count))
        #expect(whole == oneAtATime)
        let (events, visits) = try await storedRows(stores[0])
        let (otherEvents, otherVisits) = try await storedRows(stores[1])
        #expect(events == otherEvents)
        #expect(visits == otherVisits)
        // (A region edit's key ends in a nonce of its own: the events' and visits' rows are compared.)
        await #expect(
            try mutations(stores[0], entities: [.event, .visit]) == mutations(stores[1], entities: [.event, .visit]))
        await #expect(try mutations(stores[0]).count == mutations(stores[1]).count)

        #expect(events.count == 2_601)
        let seventh = try #require(events.first { $0.id == "e-7" })
        #expect(seventh.properties.contains("second 7") && seventh.properties.contains("tab\\there"))
        #expect(events.first { $0.id == "e-6" }?.lat == nil)
        #expect(
            visits.map { "\($0.id) \($0.status) v\($0.version)" }.sorted() == [
                "v-close-open closed v2", "v-open-close closed v2", "v-stored closed v2",
            ])
    }
}
