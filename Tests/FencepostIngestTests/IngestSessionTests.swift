import FencepostCore
import FencepostGeometry
import FencepostIngest
import FencepostServerTestSupport
import FencepostStore
import FencepostTestSupport
import Foundation
import Testing

@Suite struct IngestSessionTests {
    let grid = WalkGrid(origin: Position(lon: -8.62, lat: 52.66))

    func ingest(_ store: Store, _ inputs: [[Fix]], options: IngestOptions = IngestOptions()) async throws
        -> IngestSummary
    {
        try await StoreInputs.ingest(store, inputs, options: options)
    }

    func visits(_ store: Store) async throws -> [String] {
        var result: [String] = []
        try await store.forEachVisit {
            result.append("\($0.region) \($0.enteredAt) \($0.exitedAt ?? "open") \($0.exitReason ?? "")")
        }
        return result
    }

    /// Requests of one or two fixes of each device's walk, the devices taking turns; with
    /// `resentEvery`, the last request is sent again whenever the count reaches a multiple of it
    /// (a phone retrying).
    func requestsTakingTurns(_ devices: [String], resentEvery: Int? = nil) -> [[Fix]] {
        var requests: [[Fix]] = []
        let walks = devices.map { grid.walk(device: $0) }
        var index = 0
        while index < walks[0].count {
            let end = min(index + 1 + requests.count % 2, walks[0].count)
            for walk in walks { requests.append(Array(walk[index..<end])) }
            if let resentEvery, requests.count % resentEvery == 0 { requests.append(requests[requests.count - 1]) }
            index = end
        }
        return requests
    }

    /// Each request's new events, every request committed on its own.
    func eventsCommittedOneByOne(_ requests: [[Fix]], store: Store) async throws -> [[String]] {
        let session = try await IngestSession(store: store)
        var events: [[String]] = []
        for request in requests {
            events += try await session.ingest(batches: [request]).map { $0.events.map(\.id) }
        }
        return events
    }

    /// The keys of the outbox's rows other than regions', in the order sync sends them.
    func outbox(_ store: Store) async throws -> [String] {
        try await store.claimPushBatch(limit: 100_000, maxBytes: 1 << 40).map(\.mutation)
            .filter { $0.entity != .region }.map(\.key)
    }

    func events(_ store: Store) async throws -> [String] {
        var result: [String] = []
        try await store.forEachEvent(EventQuery()) {
            result.append("\($0.id) \($0.kind) \($0.region ?? "") \($0.time)")
        }
        return result
    }

    @Test func largeInputsWriteEventsInBatchesWithinOneTransaction() async throws {
        // Far more events than one batch: many small circles along a long walk.
        let store = try await TestStores.fresh()
        defer { TestStores.closeLater(store) }
        let summary = try await ingest(store, [try lapsPastManyCircles(store)])
        #expect(summary.events[.enter] == 3000 && summary.events[.exit] == 3000)
        var count = 0
        try await store.forEachEvent(EventQuery()) { _ in count += 1 }
        #expect(count == 6000)
    }

    /// Ten laps past 300 small circles: 6,000 events, several batches of background writes.
    func lapsPastManyCircles(_ store: Store) async throws -> [Fix] {
        try await store.applyRegions((0..<300).map { grid.circle("c\($0)", x: Double($0) * 20, radius: 5) })
        let walk = (0..<3060).map { grid.fix(Double($0) * 2 - 10, t: Double($0)) }
        return (0..<10).flatMap { lap in
            walk.map { fix -> Fix in
                var f = fix
                f.time += Double(lap) * 4000
                return f
            }
        }
    }

    /// A live writer's groups of small requests write each request's events and fixes at once,
    /// on the transaction's thread; one large input hands them to a task of their own. Both ways
    /// store the same events, visits and fixes in the history (whose chunks follow the writes).
    @Test func smallRequestsInGroupsStoreWhatOneLargeInputStores() async throws {
        let whole = try await TestStores.fresh()
        defer { TestStores.closeLater(whole) }
        let laps = try await lapsPastManyCircles(whole)
        try await IngestSession(store: whole).ingest(laps)

        let posted = try await TestStores.fresh()
        defer { TestStores.closeLater(posted) }
        _ = try await lapsPastManyCircles(posted)
        let session = try await IngestSession(store: posted)
        // Groups of 40 requests of 1 to 3 fixes each, as a busy service's writer takes them.
        var requests: [[Fix]] = []
        var start = 0
        while start < laps.count {
            let end = min(start + 1 + start % 3, laps.count)
            requests.append(Array(laps[start..<end]))
            start = end
        }
        for group in stride(from: 0, to: requests.count, by: 40) {
            _ = try await session.ingest(batches: Array(requests[group..<min(group + 40, requests.count)]))
        }
        #expect(try await events(posted) == (try await events(whole)))
        #expect(try await visits(posted) == (try await visits(whole)))
        let (postedHistory, wholeHistory) = (try await posted.historyStats(), try await whole.historyStats())
        #expect(postedHistory.fixes == wholeHistory.fixes, "\(postedHistory) \(wholeHistory)")
        #expect((try await events(posted)).count == 6000)
    }

    /// A group that fails undoes only what it did: the progress the session keeps goes back
    /// for the devices the group touched and stays for the others (only those touched are kept
    /// for undoing). Going on, with the failed group posted again, stores what a session that
    /// never failed stores. The failure comes part-way through an input (an event of the new
    /// device refused) or after every input (the new device's state refused).
    @Test(arguments: ["events", "devices"])
    func aFailedGroupUndoesWhatItDidAndNothingElse(refusing table: String) async throws {
        let lap = (0..<3060).map { grid.fix(Double($0) * 2 - 10, t: Double($0)) }
        func walk(_ device: String, from start: Int) -> [Fix] {
            lap[start...].map { fix in
                var moved = fix
                moved.device = device
                return moved
            }
        }
        // Three devices from the start, a fourth from the sixth group on; requests of 1 to 3
        // fixes, 30 to a group.
        var requests: [[Fix]] = []
        var next = ["a": 0, "b": 0, "c": 0]
        while requests.count < 600 {
            if requests.count == 150 { next["late"] = 0 }
            for device in next.keys.sorted() {
                let start = next[device]!
                let end = min(start + 1 + requests.count % 3, lap.count)
                guard start < end else { continue }
                requests.append(Array(walk(device, from: start)[..<(end - start)]))
                next[device] = end
            }
        }
        let groups = stride(from: 0, to: requests.count, by: 30).map {
            Array(requests[$0..<min($0 + 30, requests.count)])
        }
        let failing = groups.firstIndex { $0.contains { $0.first?.device == "late" } }!

        let steady = try await TestStores.fresh()
        defer { TestStores.closeLater(steady) }
        let failed = try await TestStores.fresh()
        defer { TestStores.closeLater(failed) }
        for store in [steady, failed] {
            try await store.applyRegions((0..<300).map { grid.circle("c\($0)", x: Double($0) * 20, radius: 5) })
        }
        let steadySession = try await IngestSession(store: steady)
        for group in groups { _ = try await steadySession.ingest(batches: group) }

        let session = try await IngestSession(store: failed)
        for group in groups[..<failing] { _ = try await session.ingest(batches: group) }
        try await TestStores.refuseInserts(in: failed, into: table, when: "NEW.device = 'late'")
        await #expect(throws: (any Error).self) { _ = try await session.ingest(batches: groups[failing]) }
        try await TestStores.allowInserts(in: failed, into: table)
        for group in groups[failing...] { _ = try await session.ingest(batches: group) }

        let stored = try await events(failed)
        #expect(stored == (try await events(steady)))
        #expect(try await visits(failed) == (try await visits(steady)))
        #expect(try await failed.historyStats().fixes == (try await steady.historyStats()).fixes)
        #expect(stored.count > 200, "\(stored.count)")
    }

    /// A group's requests hand their accepted fixes to the history once, after its last request
    /// (on PostgreSQL each hand-over is a read and a write of chunks): the tracks stored are
    /// those of every request writing its own, fix for fix, with three devices' requests
    /// interleaved in each group and a device posting twice in one; a group that fails part-way
    /// keeps none of its fixes, and sent again keeps them all.
    @Test func aGroupKeepsTheFixesOfAllItsRequestsAtOnce() async throws {
        let devices = ["bus", "tram", "ferry"]
        let requests = requestsTakingTurns(devices)
        let walkLength = grid.walk(device: devices[0]).count
        func tracks(_ store: Store) async throws -> [String: [String]] {
            var tracks: [String: [String]] = [:]
            for device in devices {
                try await store.readTrack(device: device) { fixes in
                    tracks[device, default: []] += fixes.map { "\($0.time) \($0.lat) \($0.lon)" }
                }
            }
            return tracks
        }

        let alone = try await TestStores.fresh()
        defer { TestStores.closeLater(alone) }
        try await alone.applyRegions([grid.circle("a", x: 0, radius: 60)])
        let single = try await IngestSession(store: alone)
        for request in requests { _ = try await single.ingest(batches: [request]) }

        let grouped = try await TestStores.fresh()
        defer { TestStores.closeLater(grouped) }
        try await grouped.applyRegions([grid.circle("a", x: 0, radius: 60)])
        let session = try await IngestSession(store: grouped)
        try await TestStores.refuseInserts(in: grouped, into: "events", when: "1 = 1")
        var failed = 0
        for start in stride(from: 0, to: requests.count, by: 25) {
            let group = Array(requests[start..<min(start + 25, requests.count)])
            let before = try await tracks(grouped)
            do {
                _ = try await session.ingest(batches: group)
            } catch {
                // The group with the first event fails at its write, part-way through the
                // group: none of the group's fixes stays. Sent again, it is kept whole.
                failed += 1
                #expect(try await tracks(grouped) == before)
                try await TestStores.allowInserts(in: grouped, into: "events")
                _ = try await session.ingest(batches: group)
            }
        }
        #expect(failed == 1)

        let stored = try await tracks(grouped)
        #expect(stored == (try await tracks(alone)))
        #expect(devices.allSatisfy { stored[$0]?.count == walkLength })
        #expect(try await events(grouped) == (try await events(alone)))
        #expect(try await grouped.historyStats().fixes == walkLength * devices.count)
    }

    /// A group's requests write their events together where the store writes inputs together
    /// (PostgreSQL: one set of statements for the group, not one per request), and each request
    /// still gets exactly its own new events: request for request those of requests committed
    /// one at a time, with the same events, visits and outbox rows, in the same order. Three
    /// devices take turns through a row of circles, so visits open in one request of a group
    /// and close in a later one (or in a later group); a request sent twice in a row (a
    /// client's retry) gets nothing the second time.
    @Test func eachRequestOfAGroupGetsItsOwnEvents() async throws {
        let devices = ["bus", "tram", "ferry"]
        let regions = (0..<14).map { grid.circle("c\($0)", x: -280 + Double($0) * 40, radius: 8) }
        let requests = requestsTakingTurns(devices, resentEvery: 7)

        let alone = try await TestStores.fresh()
        defer { TestStores.closeLater(alone) }
        try await alone.applyRegions(regions)
        let aloneEvents = try await eventsCommittedOneByOne(requests, store: alone)

        let grouped = try await TestStores.fresh()
        defer { TestStores.closeLater(grouped) }
        try await grouped.applyRegions(regions)
        let session = try await IngestSession(store: grouped)
        var groupedEvents: [[String]] = []
        for start in stride(from: 0, to: requests.count, by: 25) {
            let group = Array(requests[start..<min(start + 25, requests.count)])
            let outcomes = try await session.ingest(batches: group)
            #expect(outcomes.count == group.count)
            groupedEvents += outcomes.map { $0.events.map(\.id) }
        }

        #expect(groupedEvents == aloneEvents)
        #expect(aloneEvents.joined().count > 50, "\(aloneEvents.joined().count)")
        // Groups where more than one request has events: the ones written together.
        let groupsWithSeveral = stride(from: 0, to: requests.count, by: 25).filter { start in
            aloneEvents[start..<min(start + 25, requests.count)].count(where: { !$0.isEmpty }) > 1
        }
        #expect(groupsWithSeveral.count > 5, "\(groupsWithSeveral.count)")
        #expect(try await events(grouped) == (try await events(alone)))
        #expect(try await visits(grouped) == (try await visits(alone)))
        let groupedOutbox = try await outbox(grouped)
        #expect(groupedOutbox == (try await outbox(alone)))
        #expect(groupedOutbox.contains { $0.hasSuffix(":v2") })
    }

    /// A request large enough to write batches of its own in a group of small ones: the small
    /// requests' events held before it are written first, in order, and every request gets its
    /// own events, as when each is committed alone.
    @Test func aLargeRequestAmongSmallOnesInAGroupGetsItsOwnEvents() async throws {
        func requests(_ laps: [Fix]) -> [[Fix]] {
            var requests: [[Fix]] = []
            var start = 0
            for size in Array(repeating: 3, count: 30) + [12_000] + Array(repeating: 3, count: 30) {
                requests.append(Array(laps[start..<start + size]))
                start += size
            }
            return requests
        }
        let alone = try await TestStores.fresh()
        defer { TestStores.closeLater(alone) }
        let aloneRequests = requests(try await lapsPastManyCircles(alone))
        let aloneEvents = try await eventsCommittedOneByOne(aloneRequests, store: alone)

        let grouped = try await TestStores.fresh()
        defer { TestStores.closeLater(grouped) }
        let groupRequests = requests(try await lapsPastManyCircles(grouped))
        let outcomes = try await IngestSession(store: grouped).ingest(batches: groupRequests)

        #expect(outcomes.map { $0.events.map(\.id) } == aloneEvents)
        #expect(aloneEvents[30].count > 1_000 && aloneEvents[..<30].count(where: { !$0.isEmpty }) > 1)
        #expect(try await events(grouped) == (try await events(alone)))
        #expect(try await visits(grouped) == (try await visits(alone)))
        #expect(try await outbox(grouped) == (try await outbox(alone)))
    }

    @Test func aFailureAfterBatchesOfEventsWereWrittenWritesNothing() async throws {
        let store = try await TestStores.fresh()
        defer { TestStores.closeLater(store) }
        let laps = try await lapsPastManyCircles(store)
        let session = try await IngestSession(store: store)
        struct Malformed: Error {}
        await #expect(throws: Malformed.self) {
            var fixes = laps.makeIterator()
            try await session.ingest {
                guard let fix = fixes.next() else { throw Malformed() }
                return fix
            }
        }
        await #expect(try events(store).isEmpty)
        await #expect(try store.outboxCounts()[.pending] == 300)  // the regions only
        #expect(session.summary.events.isEmpty && session.summary.visitsOpened == 0)

        // The writes themselves fail part-way (a trigger refuses the 2,501st event): the error
        // is the input's, and nothing of it stays.
        try await TestStores.refuseInserts(in: store, into: "events", when: "(SELECT count(*) FROM events) > 2500")
        await #expect(throws: (any Error).self) {
            try await session.ingest(laps)
        }
        await #expect(try events(store).isEmpty)
        await #expect(try store.outboxCounts()[.pending] == 300)

        try await TestStores.allowInserts(in: store, into: "events")
        try await session.ingest(laps)
        await #expect(try events(store).count == 6000)
        #expect(session.summary.events == [.enter: 3000, .exit: 3000] && session.summary.visitsClosed == 3000)
    }

    @Test func ingestWritesEventsVisitsAndOutboxAndIsIdempotent() async throws {
        let store = try await TestStores.fresh()
        defer { TestStores.closeLater(store) }
        try await store.applyRegions([grid.circle("a", x: -100, radius: 50), grid.circle("b", x: 150, radius: 40)])
        let first = try await ingest(store, [grid.walk()])
        #expect(first.events == [.enter: 2, .exit: 2])
        #expect(first.visitsOpened == 2 && first.visitsClosed == 2)
        await #expect(try store.outboxCounts()[.pending] == 10)  // 2 regions added, 4 events, 2 visits opened and closed
        let before = try await events(store)

        let again = try await ingest(store, [grid.walk()])
        #expect(again.fixesAccepted == 0)
        #expect(again.dropped == [.alreadySeen: 301])
        await #expect(try events(store) == before)
        await #expect(try store.outboxCounts()[.pending] == 10)
    }

    @Test func aVisitOpenAtTheEndOfOneInputIsClosedByTheNext() async throws {
        let regions = [grid.circle("a", x: 0, radius: 60)]
        let walk = grid.walk()
        let split = try await TestStores.fresh()
        defer { TestStores.closeLater(split) }
        try await split.applyRegions(regions)
        _ = try await ingest(split, [Array(walk[..<150])])
        let splitVisits = try await visits(split)
        #expect(splitVisits.count == 1 && splitVisits[0].hasSuffix("open "))
        _ = try await ingest(split, [Array(walk[150...])])

        let whole = try await TestStores.fresh()
        defer { TestStores.closeLater(whole) }
        try await whole.applyRegions(regions)
        _ = try await ingest(whole, [walk])
        await #expect(try visits(split) == visits(whole))
        await #expect(try events(split) == events(whole))
    }

    @Test func unsortedInputIsProcessedInTimeOrder() async throws {
        let sorted = try await TestStores.fresh()
        defer { TestStores.closeLater(sorted) }
        let reversed = try await TestStores.fresh()
        defer { TestStores.closeLater(reversed) }
        for store in [sorted, reversed] { try await store.applyRegions([grid.circle("a", x: 0, radius: 60)]) }
        _ = try await ingest(sorted, [grid.walk()])
        let summary = try await ingest(reversed, [grid.walk().reversed()])
        #expect(summary.dropped.isEmpty)
        await #expect(try events(reversed) == events(sorted))
    }

    @Test func aFailedInputWritesNothing() async throws {
        let store = try await TestStores.fresh()
        defer { TestStores.closeLater(store) }
        try await store.applyRegions([grid.circle("a", x: 0, radius: 60)])
        let session = try await IngestSession(store: store)
        struct Malformed: Error {}
        // A reader that fails after the whole walk (and its events) went through.
        await #expect(throws: Malformed.self) {
            var fixes = grid.walk().makeIterator()
            try await session.ingest {
                guard let fix = fixes.next() else { throw Malformed() }
                return fix
            }
        }
        await #expect(try events(store).isEmpty)
        await #expect(try store.deviceState("bus") == nil)
        #expect(session.summary.fixesRead == 0)
        // The next input for the same device starts from the committed (empty) state.
        try await session.ingest(grid.walk())
        await #expect(try events(store).count == 2)
    }

    @Test func removingOrChangingARegionClosesItsOpenVisits() async throws {
        let store = try await TestStores.fresh()
        defer { TestStores.closeLater(store) }
        let a = grid.circle("a", x: 0, radius: 60)
        let b = grid.circle("b", x: 0, radius: 30)
        try await store.applyRegions([a, b])
        _ = try await ingest(store, [Array(grid.walk()[..<150])])  // ends at x = -2: inside both
        await #expect(try visits(store).filter { $0.hasSuffix("open ") }.count == 2)

        var moved = b
        moved.shape = .circle(center: grid.projection.unproject(x: 200, y: 0), radius: 30)
        try await store.applyRegions([moved])  // a removed, b's geometry changed
        let closed = try await visits(store)
        #expect(closed.contains { $0.hasPrefix("a ") && $0.hasSuffix(" region_removed") })
        #expect(closed.contains { $0.hasPrefix("b ") && $0.hasSuffix(" region_changed") })
        // Closed at the device's last fix time, not the wall clock.
        #expect(closed.allSatisfy { $0.contains("2023-11-14T22:15:49.000Z region_") })
        await #expect(try store.deviceState("bus")?.monitor.memberships.isEmpty == true)

        // The next fixes re-evaluate membership against the new geometry.
        _ = try await ingest(store, [Array(grid.walk()[150...])])
        await #expect(try visits(store).filter { $0.hasPrefix("b ") }.count == 2)
    }
}

extension IngestSessionTests {
    @Test func disablingARegionClosesItsOpenVisitsLikeARemoval() async throws {
        let store = try await TestStores.fresh()
        defer { TestStores.closeLater(store) }
        let a = grid.circle("a", x: 0, radius: 60)
        try await store.applyRegions([a])
        _ = try await ingest(store, [Array(grid.walk()[..<150])])
        var disabled = a
        disabled.settings.enabled = false
        let plan = try await store.applyRegions([disabled])
        #expect(plan.changes.map(\.line) == ["~ update a"])
        await #expect(try visits(store).allSatisfy { $0.hasSuffix(" region_removed") })
        // Re-enabling starts afresh: the next fixes inside open a new visit.
        try await store.applyRegions([a])
        _ = try await ingest(store, [Array(grid.walk()[150...])])
        await #expect(try visits(store).count == 2)
    }
}

extension IngestSessionTests {
    @Test func anInputSortedByDeviceThenTimeStreams() async throws {
        // Two devices, one after the other, each in time order but overlapping in time, and
        // more fixes than the in-memory sort allows: it must stream, not be refused.
        let store = try await TestStores.fresh()
        defer { TestStores.closeLater(store) }
        try await store.applyRegions([grid.circle("a", x: 0, radius: 60)])
        let options = IngestOptions(sortRunFixes: 500)
        let inputs = grid.walk(device: "one") + grid.walk(device: "two")
        let summary = try await ingest(store, [inputs], options: options)
        #expect(summary.fixesAccepted == 602)
        #expect(summary.events == [.enter: 2, .exit: 2])
    }

    @Test func unsortedInputsLargerThanMemorySortThroughSpilledRuns() async throws {
        // Three devices, shuffled together, sorted through runs of 100 fixes on disk.
        var mixed = grid.walk(device: "one") + grid.walk(device: "two") + grid.walk(device: "three")
        var generator = SystemRandomNumberGenerator()
        mixed.shuffle(using: &generator)
        let spilled = try await TestStores.fresh()
        defer { TestStores.closeLater(spilled) }
        let sorted = try await TestStores.fresh()
        defer { TestStores.closeLater(sorted) }
        for store in [spilled, sorted] { try await store.applyRegions([grid.circle("a", x: 0, radius: 60)]) }
        let summary = try await ingest(spilled, [mixed], options: IngestOptions(sortRunFixes: 100))
        #expect(summary.dropped.isEmpty)
        _ = try await ingest(sorted, [grid.walk(device: "one"), grid.walk(device: "two"), grid.walk(device: "three")])
        await #expect(try events(spilled) == events(sorted))
        await #expect(try visits(spilled) == visits(sorted))
    }
}
