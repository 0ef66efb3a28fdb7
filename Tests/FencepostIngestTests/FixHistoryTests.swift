import FencepostCore
import FencepostFormats
import FencepostGeometry
import FencepostIngest
import FencepostServerTestSupport
import FencepostStore
import FencepostTestSupport
import Foundation
import Testing

/// The stored fixes (``FixHistory``), on SQLite, and on PostgreSQL when `FENCEPOST_TEST_POSTGRES`
/// names a server: every accepted fix kept in the ingest's transaction, read back in time order.
@Suite struct FixHistoryTests {
    let grid = WalkGrid(origin: Position(lon: -8.62, lat: 52.66))
    static let sample = TestData.packageRoot.appendingPathComponent("samples/bus304_to_UL_2019-02-18.gpx").path
    static let sampleRegions = TestData.packageRoot.appendingPathComponent("regions").path

    /// Every stored fix of `device`, as ``Store/readTrack`` gives them.
    func track(_ store: Store, _ device: String, since: Double? = nil, until: Double? = nil) async throws -> [Fix] {
        var fixes: [Fix] = []
        try await store.readTrack(device: device, since: since, until: until) { fixes += $0 }
        return fixes
    }

    /// Whether two fixes agree to the stored precision (1e-7 degrees, the millisecond, 0.1 m).
    func same(_ a: Fix, _ b: Fix) -> Bool {
        Timestamp.milliseconds(a.time) == Timestamp.milliseconds(b.time) && abs(a.lat - b.lat) <= 0.6e-7
            && abs(a.lon - b.lon) <= 0.6e-7
            && a.accuracy.map { v in b.accuracy.map { abs(v - $0) <= 0.051 } ?? false }
                ?? (b.accuracy == nil)
    }

    func ingestSample(_ store: Store) async throws -> (IngestSummary, [Fix]) {
        try await store.applyRegions(try RegionConfigLoader.load([Self.sampleRegions]))
        let session = try await IngestSession(store: store)
        var reader = try TraceOpener.open(Self.sample, format: nil, device: nil)
        try await session.ingest { try reader.next() }
        var fileFixes: [Fix] = []
        var again = try TraceOpener.open(Self.sample, format: nil, device: nil)
        while let fix = try again.next() { fileFixes.append(fix) }
        return (session.summary, fileFixes)
    }

    @Test func theSampleTraceIsKeptWholeInTimeOrder() async throws {
        let store = try await TestStores.fresh()
        defer { TestStores.closeLater(store) }
        let (summary, fileFixes) = try await ingestSample(store)
        let device = try #require(summary.devices.first)
        let stored = try await track(store, device)
        #expect(stored.count == summary.fixesAccepted)
        #expect(summary.fixesKept == summary.fixesAccepted)
        #expect(zip(stored, stored.dropFirst()).allSatisfy { $0.time < $1.time })
        // Each stored fix is one of the file's, as read.
        let byTime = Dictionary(
            fileFixes.map { (Timestamp.milliseconds($0.time), $0) }, uniquingKeysWith: { a, _ in a })
        #expect(stored.allSatisfy { fix in byTime[Timestamp.milliseconds(fix.time)].map { same($0, fix) } ?? false })
        #expect(try await store.historyDevices() == [device])
        let stats = try await store.historyStats(device: device)
        #expect(stats.fixes == stored.count)
        #expect(stats.first == stored.first?.time && stats.last == stored.last?.time)

        // A window: both bounds included.
        let from = stored[100].time
        let to = stored[200].time
        #expect(try await track(store, device, since: from, until: to).map(\.time) == stored[100...200].map(\.time))
    }

    @Test func aPositionBetweenTwoFixesIsInterpolated() async throws {
        let store = try await TestStores.fresh()
        defer { TestStores.closeLater(store) }
        let (summary, _) = try await ingestSample(store)
        let device = try #require(summary.devices.first)
        let stored = try await track(store, device)
        // The first pair of consecutive fixes that are apart in both time and place.
        let index = try #require(
            stored.indices.dropLast().first {
                stored[$0 + 1].time - stored[$0].time >= 2 && stored[$0].lat != stored[$0 + 1].lat
            })
        let (a, b) = (stored[index], stored[index + 1])
        let time = a.time + (b.time - a.time) / 4
        let around = try await store.fixesAround(device: device, time: time)
        #expect(around.before.map { same($0, a) } == true)
        #expect(around.after.map { same($0, b) } == true)
        guard
            case .interpolated(let position, _, _, let fraction) = TrackPosition.at(
                time, before: around.before, after: around.after, maxGap: 900)
        else {
            Issue.record("no interpolated position")
            return
        }
        #expect(abs(fraction - 0.25) < 1e-6)
        #expect(abs(position.lat - (a.lat + (b.lat - a.lat) / 4)) < 1e-9)
        #expect(abs(position.lon - (a.lon + (b.lon - a.lon) / 4)) < 1e-9)
        // At a fix's own time, that fix; outside the stored range, nothing.
        let exact = try await store.fixesAround(device: device, time: a.time)
        #expect(
            TrackPosition.at(a.time, before: exact.before, after: exact.after, maxGap: 900) == .exact(exact.before!))
        let early = try await store.fixesAround(device: device, time: stored[0].time - 60)
        #expect(early.before == nil && early.after.map { same($0, stored[0]) } == true)
        #expect(TrackPosition.at(a.time, before: a, after: b, maxGap: (b.time - a.time) / 2) == .exact(a))
        #expect(TrackPosition.at(time, before: a, after: b, maxGap: (b.time - a.time) / 2) == .gap(before: a, after: b))
    }

    @Test func runsOutOfOrderAndRepeatedReadBackSortedAndDistinct() async throws {
        let store = try await TestStores.fresh()
        defer { TestStores.closeLater(store) }
        let hour = FixHistory.hour(ofMs: Timestamp.milliseconds(grid.fix(0, t: 0).time))
        let base = Double(hour) / 1000
        func fix(_ t: Double, x: Double) -> Fix { grid.fix(x, t: base + t - 1_700_000_000, device: "van") }
        let runs = [
            FixRun(device: "van", hourMs: hour, fixes: [fix(10, x: 1), fix(20, x: 2), fix(30, x: 3)]),
            // Earlier than the chunk's last fix, and one time again (a replay): another chunk.
            FixRun(device: "van", hourMs: hour, fixes: [fix(25, x: 9), fix(5, x: 0), fix(20, x: 7)]),
            FixRun(device: "van", hourMs: hour + FixHistory.hourMs, fixes: [fix(3_600, x: 4)]),
        ]
        try await store.ingestTransaction(written: { _ in }) { tx in
            try await tx.write([], keeping: runs, now: Timestamp.format(Date()))
        }
        let stored = try await track(store, "van")
        #expect(stored.map { $0.time - base } == [5, 10, 20, 25, 30, 3_600])
        // The first stored of a repeated time is kept.
        #expect(same(stored[2], fix(20, x: 2)))
    }

    @Test func aLiveDeviceFillsOneChunkAPostAtATime() async throws {
        let store = try await TestStores.fresh()
        defer { TestStores.closeLater(store) }
        let session = try await IngestSession(store: store)
        let walk = grid.walk(device: "phone")
        for fix in walk.prefix(120) { _ = try await session.ingest(batches: [[fix]]) }
        let stats = try await store.historyStats(device: "phone")
        #expect(stats.fixes == 120)
        // One hour's fixes, well under a chunk's limit: appended to one row, not a row each.
        let hours = Set(walk.prefix(120).map { FixHistory.hour(ofMs: Timestamp.milliseconds($0.time)) }).count
        #expect(stats.chunks == hours)
        #expect(try await track(store, "phone").count == 120)
    }

    @Test func aPrivateRegionKeepsItsEventsButNoFixInside() async throws {
        let store = try await TestStores.fresh()
        defer { TestStores.closeLater(store) }
        var home = grid.circle("home", x: 0, radius: 50)
        home.settings.privacy = true
        try await store.applyRegions([home, grid.circle("shop", x: 200, radius: 30)])
        let walk = grid.walk()
        let summary = try await StoreInputs.ingest(store, [walk])
        #expect(summary.events[.enter] == 2 && summary.events[.exit] == 2)
        var homeEvents = 0
        try await store.forEachEvent(EventQuery(region: "home")) { _ in homeEvents += 1 }
        #expect(homeEvents == 2)
        let stored = try await track(store, "bus")
        guard case .circle(let centre, let radius) = home.shape else { return }
        let inside = walk.filter { Geodesy.distance($0.position, centre) <= radius }
        #expect(!inside.isEmpty)
        #expect(stored.allSatisfy { Geodesy.distance($0.position, centre) > radius })
        #expect(stored.count == summary.fixesAccepted - inside.count)
        // The property is the region's: in its canonical feature, and a change the plan names.
        #expect(home.canonicalFeatureText.contains(#""privacy":true"#))
    }

    @Test func retentionDeletesOldHoursAndZeroKeepsNone() async throws {
        let store = try await TestStores.fresh()
        defer { TestStores.closeLater(store) }
        #expect(try await store.historyDays() == Store.defaultHistoryDays)
        let now = Date()
        func walk(daysAgo: Double, device: String) -> [Fix] {
            grid.walk(device: device).map {
                var fix = $0
                fix.time += now.timeIntervalSince1970 - 1_700_000_400 - daysAgo * 86_400
                return fix
            }
        }
        let old = walk(daysAgo: 10, device: "old")
        let recent = walk(daysAgo: 1, device: "recent")
        _ = try await StoreInputs.ingest(store, [old, recent])
        #expect(try await store.historyDevices() == ["old", "recent"])
        try await store.setHistoryDays(5)
        let pruned = try await store.pruneHistory(now: now)
        #expect(pruned == old.count)
        #expect(try await store.historyDevices() == ["recent"])
        #expect(try await track(store, "recent").count == recent.count)

        try await store.setHistoryDays(0)
        let summary = try await StoreInputs.ingest(store, [walk(daysAgo: 0, device: "today")])
        #expect(summary.fixesAccepted > 0 && summary.fixesKept == 0)
        #expect(try await store.pruneHistory(now: now) == recent.count)
        #expect(try await store.historyDevices().isEmpty)
    }

    @Test func noHistoryRunsKeepNothingAndEventsAreTheSame() async throws {
        let with = try await TestStores.fresh()
        let without = try await TestStores.fresh()
        defer {
            TestStores.closeLater(with)
            TestStores.closeLater(without)
        }
        let regions = [grid.circle("a", x: -100, radius: 30), grid.circle("b", x: 100, radius: 30)]
        try await with.applyRegions(regions)
        try await without.applyRegions(regions)
        var options = IngestOptions()
        _ = try await StoreInputs.ingest(with, [grid.walk()])
        options.keepsHistory = false
        _ = try await StoreInputs.ingest(without, [grid.walk()], options: options)
        #expect(try await without.historyDevices().isEmpty)
        #expect(try await track(with, "bus").count == grid.walk().count)
        func events(_ store: Store) async throws -> [String] {
            var ids: [String] = []
            try await store.forEachEvent(EventQuery()) { ids.append("\($0.id) \($0.time)") }
            return ids
        }
        #expect(try await events(with) == events(without))
        #expect(try await with.deleteHistory(device: "bus") == grid.walk().count)
        #expect(try await with.historyDevices().isEmpty)
    }

    @Test func aFailedIngestKeepsNoFixAndItsRerunKeepsThemAll() async throws {
        let store = try await TestStores.fresh()
        defer { TestStores.closeLater(store) }
        try await store.applyRegions([grid.circle("a", x: 0, radius: 30)])
        // The events' insert fails part-way through the input's transaction.
        try await TestStores.refuseInserts(in: store, into: "events", when: "NEW.kind = 'exit'")
        await #expect(throws: (any Error).self) { _ = try await StoreInputs.ingest(store, [grid.walk()]) }
        #expect(try await store.historyDevices().isEmpty)
        try await TestStores.allowInserts(in: store, into: "events")
        let summary = try await StoreInputs.ingest(store, [grid.walk()])
        #expect(summary.events[.exit] == 1)
        #expect(try await track(store, "bus").count == summary.fixesAccepted)
    }
}
