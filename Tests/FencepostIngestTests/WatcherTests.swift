import FencepostCore
import FencepostFormats
import FencepostIngest
import FencepostStore
import FencepostTestSupport
import Foundation
import Synchronization
import Testing

/// The watched inbox and regions folder on real folders, a real store and real time: files are
/// taken once complete, imported once, and moved; the regions folder is applied when it
/// changes, and a refused config keeps the monitored set.
@Suite struct WatcherTests {
    /// A temporary folder with a store, an inbox and a regions folder holding one 60 m circle.
    final class Setup {
        let root: URL
        let store: Store
        var inbox: String { root.appendingPathComponent("inbox").path }
        var regions: String { root.appendingPathComponent("regions").path }
        private(set) var reports: [WatchReport] = []

        init() throws {
            root = FileManager.default.temporaryDirectory.appendingPathComponent("fencepost-watch-\(UUID().uuidString)")
            try FileManager.default.createDirectory(
                atPath: root.appendingPathComponent("regions").path, withIntermediateDirectories: true)
            store = try Store(path: root.appendingPathComponent("store.db").path)
            try write("regions/stop.geojson", WatcherTests.circles([("stop", -8.62)]))
        }

        deinit {
            try? FileManager.default.removeItem(at: root)
        }

        func watcher(store: Store? = nil, regions: Bool = true, now: @escaping () -> Date = Date.init) async throws
            -> Watcher
        {
            try await Watcher(
                store: store ?? self.store,
                folders: Watcher.Folders(inbox: inbox, regions: regions ? self.regions : nil),
                options: FileImport.Options(), now: now
            ) { self.reports.append($0) }
        }

        @discardableResult
        func write(_ relative: String, _ text: String) throws -> String {
            let path = root.appendingPathComponent(relative).path
            try Data(text.utf8).write(to: URL(fileURLWithPath: path))
            return path
        }

        /// Writes `text` under a dot name and renames it in, as careful writers do.
        func drop(_ name: String, _ text: String) throws {
            let hidden = try write("inbox/.\(name).part", text)
            try FileManager.default.moveItem(atPath: hidden, toPath: (inbox as NSString).appendingPathComponent(name))
        }

        func contents(_ folder: String) -> [String] {
            ((try? FileManager.default.contentsOfDirectory(atPath: (inbox as NSString).appendingPathComponent(folder)))
                ?? []).sorted()
        }

        /// Names of the files each report took, with what became of them.
        var taken: [String] {
            reports.compactMap { report in
                guard case .file(let name, let outcome, _) = report else { return nil }
                switch outcome {
                case .ingested: return "\(name) ingested"
                case .healthImported: return "\(name) health"
                case .alreadyImported: return "\(name) already"
                case .refused: return "\(name) refused"
                }
            }
        }

        func eventCount() async throws -> Int {
            var count = 0
            try await store.forEachEvent(EventQuery()) { _ in count += 1 }
            return count
        }
    }

    /// Circles of 60 m on the parallel 52.66 N, at the given longitudes.
    static func circles(_ circles: [(id: String, lon: Double)]) -> String {
        let features = circles.map {
            #"{"type":"Feature","geometry":{"type":"Point","coordinates":[\#($0.lon),52.66]},"properties":{"id":"\#($0.id)","radius":60}}"#
        }
        return #"{"type":"FeatureCollection","features":["# + features.joined(separator: ",") + "]}"
    }

    /// A walk east along 52.66 N through the circle at -8.62, one fix a second at 2 m/s, from
    /// 300 m west: in at 120 s, out at 180 s.
    static func walk(device: String, start: Double = 1_700_000_000, seconds: Int = 300) -> String {
        let metresPerDegree = 111_195.08 * cos(52.66 * .pi / 180)
        let lines = (0..<seconds).map { second in
            "\(Int(start) + second),52.66,\(-8.62 + (-300 + 2 * Double(second)) / metresPerDegree),5,\(device)"
        }
        return "time,lat,lon,accuracy,device\n" + lines.joined(separator: "\n") + "\n"
    }

    static func plan(_ report: WatchReport) -> RegionPlan? {
        guard case .regionsApplied(_, let plan) = report else { return nil }
        return plan
    }

    static func ingested(_ report: WatchReport, _ file: String) -> (summary: IngestSummary, movedTo: String)? {
        guard case .file(let name, .ingested(let summary, _), let movedTo) = report, name == file else { return nil }
        return (summary, movedTo)
    }

    /// Looks until `done` holds, waiting for changes in between (at most 20 s).
    static func look(_ watcher: Watcher, until done: () throws -> Bool) async throws {
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            await watcher.look()
            if try done() { return }
            await watcher.waitForChange(timeout: 0.1)
        }
        Issue.record("the watcher did not get there in 20 s")
    }

    @Test func filesWaitingAtStartGoFirstOldestFirstThenDroppedOnesEachContentOnce() async throws {
        let setup = try Setup()
        try FileManager.default.createDirectory(atPath: setup.inbox, withIntermediateDirectories: true)
        let older = try setup.write("inbox/b.csv", Self.walk(device: "b"))
        let newer = try setup.write("inbox/a.csv", Self.walk(device: "a"))
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-600)], ofItemAtPath: older)
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-300)], ofItemAtPath: newer)
        let watcher = try await setup.watcher()
        await watcher.look()
        // The regions first, then the waiting files, oldest first.
        #expect(setup.reports.first.flatMap(Self.plan)?.summary == "1 to add, 0 to update, 0 to remove, 0 unchanged")
        #expect(setup.taken == ["b.csv ingested", "a.csv ingested"])

        // Dropped while it runs: renamed in, then the same content under another name, written
        // in place (taken once it has held still).
        try setup.drop("c.csv", Self.walk(device: "c"))
        try setup.write("inbox/c-again.csv", Self.walk(device: "c"))
        try await Self.look(watcher) { setup.taken.count == 4 }
        #expect(setup.taken == ["b.csv ingested", "a.csv ingested", "c.csv ingested", "c-again.csv already"])
        #expect(setup.contents("done") == ["a.csv", "b.csv", "c-again.csv", "c.csv"])
        #expect(setup.contents(".").filter { !$0.hasPrefix(".") } == ["done", "failed"])
        #expect(try await setup.eventCount() == 6)
        let c = try #require(setup.reports.compactMap { Self.ingested($0, "c.csv") }.first)
        #expect(
            c.summary.fixesRead == 300 && c.summary.events == [.enter: 1, .exit: 1] && c.summary.devices == ["c"]
                && c.movedTo == "done/c.csv")

        // A restart imports nothing twice: the same files dropped again are already imported.
        let restarted = try await setup.watcher()
        try setup.drop("b.csv", Self.walk(device: "b"))
        try await Self.look(restarted) { setup.taken.count == 5 }
        #expect(setup.taken.last == "b.csv already")
        #expect(setup.contents("done").contains("b-2.csv"))
        #expect(try await setup.eventCount() == 6)
    }

    /// A file still being written (20 lines every 0.2 s) is left alone; once it has held still it
    /// is imported whole. The looks go by a clock the test moves, so a loaded machine that
    /// stalls the test for seconds cannot make the file look still while it is written.
    @Test func aHalfWrittenFileIsTakenOnlyOnceComplete() async throws {
        let setup = try Setup()
        // Behind the file system's clock: a file's modification time never looks 2 s old by it.
        let clock = Mutex(Date().addingTimeInterval(-3600))
        let watcher = try await setup.watcher(now: { clock.withLock { $0 } })
        let lines = Self.walk(device: "slow").split(separator: "\n", omittingEmptySubsequences: false).map { $0 + "\n" }
        let path = (setup.inbox as NSString).appendingPathComponent("slow.csv")
        #expect(FileManager.default.createFile(atPath: path, contents: Data(lines[0..<100].joined().utf8)))
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.seekToEnd()
        for start in stride(from: 100, to: lines.count - 1, by: 20) {
            await watcher.look()
            #expect(setup.taken.isEmpty, "taken while being written")
            try handle.write(contentsOf: Data(lines[start..<min(start + 20, lines.count - 1)].joined().utf8))
            clock.withLock { $0 += 0.2 }
        }
        try handle.close()
        // Complete, but still for less than 2 s: still waiting.
        for _ in 0..<2 {
            await watcher.look()
            #expect(setup.taken.isEmpty, "taken before it held still for 2 s")
            clock.withLock { $0 += 1.5 }
        }
        await watcher.look()
        #expect(setup.taken == ["slow.csv ingested"])
        let slow = try #require(setup.reports.compactMap { Self.ingested($0, "slow.csv") }.first)
        #expect(slow.summary.fixesRead == 300 && slow.summary.events == [.enter: 1, .exit: 1])
    }

    @Test func aMalformedFileGoesToFailedWithItsReason() async throws {
        let setup = try Setup()
        let watcher = try await setup.watcher()
        try setup.drop(
            "broken.gpx",
            "<gpx><trk><trkseg>\n<trkpt lat=\"52.66\" lon=\"-8.62\"><time>2023-11-14T22:14:20Z</time></trkseg>")
        try setup.drop("good.csv", Self.walk(device: "good"))
        try await Self.look(watcher) { setup.taken.count == 2 }
        #expect(Set(setup.taken) == ["broken.gpx refused", "good.csv ingested"])
        #expect(setup.contents("failed") == ["broken.gpx", "broken.gpx.error.txt"])
        let reason = try String(
            contentsOfFile: (setup.inbox as NSString).appendingPathComponent("failed/broken.gpx.error.txt"),
            encoding: .utf8)
        #expect(reason.hasPrefix("error: \(setup.inbox)/broken.gpx:2: malformed XML"))
        #expect(reason.hasSuffix("(nothing of it was written)\n"))
        #expect(try await setup.eventCount() == 2)
        #expect(try await setup.store.deviceAnchors().keys.sorted() == ["good"])
    }

    /// The archive that once kept the inbox waiting for ever (its export.xml's deflate stream
    /// never ends): refused with its reason, and the file dropped after it still imported.
    @Test func anArchiveWhoseDeflateStreamNeverEndsGoesToFailed() async throws {
        let setup = try Setup()
        let watcher = try await setup.watcher()
        let archive = TestData.packageRoot.appendingPathComponent(
            "FuzzTesting/Crashes/health-zip/never-ending-deflate.zip")
        let hidden = (setup.inbox as NSString).appendingPathComponent(".export.zip.part")
        try FileManager.default.copyItem(atPath: archive.path, toPath: hidden)
        try FileManager.default.moveItem(
            atPath: hidden, toPath: (setup.inbox as NSString).appendingPathComponent("export.zip"))
        try setup.drop("good.csv", Self.walk(device: "good"))
        try await Self.look(watcher) { setup.taken.count == 2 }
        #expect(Set(setup.taken) == ["export.zip refused", "good.csv ingested"])
        #expect(setup.contents("failed") == ["export.zip", "export.zip.error.txt"])
        let reason = try String(
            contentsOfFile: (setup.inbox as NSString).appendingPathComponent("failed/export.zip.error.txt"),
            encoding: .utf8)
        #expect(
            reason.contains(
                "export.zip:apple_health_export/export.xml: corrupt zip entry: its deflate stream does not end"))
        #expect(try await setup.eventCount() == 2)
    }

    /// Two watchers (two connections, as two processes would have) on one inbox at once: each
    /// file's events are written once.
    @Test func twoWatchersImportEachFileOnce() async throws {
        let setup = try Setup()
        try FileManager.default.createDirectory(atPath: setup.inbox, withIntermediateDirectories: true)
        for index in 0..<6 { try setup.write("inbox/f\(index).csv", Self.walk(device: "d\(index)")) }
        // The same content twice, under two names.
        try setup.write("inbox/f0-copy.csv", Self.walk(device: "d0"))
        let (one, other) = (Setup.Reports(), Setup.Reports())
        let first = try await Watcher(
            store: setup.store, folders: Watcher.Folders(inbox: setup.inbox, regions: setup.regions),
            options: FileImport.Options()
        ) {
            one.append($0)
        }
        // The same store opened again (a SQLite file or a PostgreSQL database), as a second process would.
        let second = try await Watcher(
            store: try await Store.open(setup.store.location),
            folders: Watcher.Folders(inbox: setup.inbox),
            options: FileImport.Options()
        ) { other.append($0) }
        await first.look()  // the regions; the files, just written, have not held still yet
        let inbox = setup.inbox
        await withTaskGroup(of: Void.self) { group in
            for watcher in [first, second].map(Handed.init) {
                group.addTask {
                    let deadline = Date().addingTimeInterval(20)
                    while Date() < deadline,
                        (try? FileManager.default.contentsOfDirectory(atPath: inbox))?.contains(where: {
                            $0.hasSuffix(".csv")
                        }) ?? false
                    {
                        await watcher.value.look()
                        await watcher.value.waitForChange(timeout: 0.05)
                    }
                }
            }
        }
        let ingested = (one.taken + other.taken).filter { $0.hasSuffix("ingested") }
        #expect(ingested.count == 6, "\(one.taken) / \(other.taken)")
        #expect(try await setup.eventCount() == 12)
        #expect(setup.contents("done").count == 7)
    }

    /// An invalid edit of the regions folder keeps the monitored set and is logged with every
    /// problem; fixing it applies it.
    @Test func anInvalidThenFixedRegionsFile() async throws {
        let setup = try Setup()
        let watcher = try await setup.watcher()
        await watcher.look()
        #expect(try await setup.store.monitoredRegions().map(\.region.id) == ["stop"])

        try setup.write(
            "regions/stop.geojson",
            #"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Point","coordinates":[-8.62,52.66]},"properties":{"id":"stop","radius":-5}},{"type":"Feature","geometry":{"type":"Point","coordinates":[-8.61,52.66]},"properties":{"radius":60}}]}"#
        )
        try await Self.look(watcher) { setup.reports.contains { if case .regionsRefused = $0 { true } else { false } } }
        let refusal = try #require(setup.reports.last)
        guard case .regionsRefused(_, let error) = refusal else {
            Issue.record("not refused: \(refusal)")
            return
        }
        #expect(error.issues.count == 2)
        let lines = refusal.lines
        #expect(
            lines.count == 3 && lines[0].contains("radius must be greater than 0 metres")
                && lines[1].contains("feature 1"))
        #expect(lines[2].hasSuffix("refused: 2 problems; the monitored regions are as they were"))
        #expect(try await setup.store.monitoredRegions().map(\.region.id) == ["stop"])
        // A trace dropped meanwhile goes against the regions as they were.
        try setup.drop("walk.csv", Self.walk(device: "w"))
        try await Self.look(watcher) { setup.taken.count == 1 }
        #expect(try await setup.eventCount() == 2)

        try setup.write("regions/stop.geojson", Self.circles([("stop", -8.62), ("next", -8.60)]))
        try await Self.look(watcher) { setup.reports.compactMap(Self.plan).count == 2 }
        #expect(setup.reports.compactMap(Self.plan).last?.summary == "1 to add, 0 to update, 0 to remove, 1 unchanged")
        #expect(try await setup.store.monitoredRegions().map(\.region.id).sorted() == ["next", "stop"])
    }

    /// An Apple Health export dropped in goes to health import, told apart by its content.
    @Test func anAppleHealthExportIsImportedAsOne() async throws {
        let setup = try Setup()
        let watcher = try await setup.watcher(regions: false)
        let record =
            #"<Record type="HKQuantityTypeIdentifierStepCount" sourceName="Phone" unit="count" creationDate="2023-01-14 09:00:00 -0500" startDate="2023-01-14 08:00:00 -0500" endDate="2023-01-14 09:00:00 -0500" value="500"/>"#
        let xml = "<?xml version=\"1.0\"?>\n<HealthData locale=\"en_US\">\n\(record)\n</HealthData>\n"
        try setup.drop("export.xml", xml)
        try await Self.look(watcher) { !setup.taken.isEmpty }
        #expect(setup.taken == ["export.xml health"])
        var ids: [String] = []
        try await setup.store.forEachEvent(EventQuery()) { ids.append($0.id) }
        #expect(ids == ["me:steps-2023-01-14"])
        try setup.drop("export-again.xml", xml)
        try await Self.look(watcher) { setup.taken.count == 2 }
        #expect(setup.taken.last == "export-again.xml already")
    }
}

/// A watcher handed to the one task that uses it.
struct Handed: @unchecked Sendable {
    let value: Watcher
}

extension WatcherTests.Setup {
    /// Reports of a second watcher, collected from its own thread.
    final class Reports: Sendable {
        private let reports = Mutex<[String]>([])

        func append(_ report: WatchReport) {
            guard case .file(let name, let outcome, _) = report else { return }
            let what: String
            switch outcome {
            case .ingested: what = "ingested"
            case .healthImported: what = "health"
            case .alreadyImported: what = "already"
            case .refused: what = "refused"
            }
            reports.withLock { $0.append("\(name) \(what)") }
        }

        var taken: [String] { reports.withLock { $0 } }
    }
}
