import FencepostTestSupport
import Foundation
import Testing

/// Region edits replayed on the stored history (design, "regions plan --replay SINCE", "apply
/// --backfill"): the sample set with one stop left out, the bus's journey ingested, then the
/// stop added back.
@Suite struct RegionsBackfillTests {
    static let trace = TestData.packageRoot.appendingPathComponent("samples/bus304_to_UL_2019-02-18.gpx").path
    static let regions = TestData.packageRoot.appendingPathComponent("regions").path
    static let since = "2019-01-01T00:00:00Z"

    /// The sample set without the stop `left`, as a file of its own.
    static func withoutOne(_ cli: FencepostBinary) throws -> (path: String, left: String) {
        let data = try Data(contentsOf: URL(fileURLWithPath: regions + "/limerick-304-stops.geojson"))
        var document = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        var features = try #require(document["features"] as? [[String: Any]])
        let left = try #require((features[5]["properties"] as? [String: Any])?["id"] as? String)
        features.remove(at: 5)
        document["features"] = features
        let text = String(decoding: try JSONSerialization.data(withJSONObject: document), as: UTF8.self)
        return (try cli.write("less.geojson", text), left)
    }

    @Test func replayReportsScansVisitsAndBackfillMakesAFreshStoresExports() async throws {
        let cli = try FencepostBinary()
        defer { cli.cleanUp() }
        let (less, left) = try Self.withoutOne(cli)
        #expect(try await cli.run("regions", "apply", less).status == 0)
        #expect(try await cli.run("ingest", Self.trace).status == 0)

        let scan = try await cli.run("scan", "--visits", "--regions", Self.regions, Self.trace)
        let scanned = scan.stdout.split(separator: "\n").filter { $0.contains(",\(left),") }.count
        #expect(scanned >= 1)
        let plan = try await cli.run("regions", "plan", Self.regions, "--replay", Self.since)
        #expect(plan.status == 0)
        #expect(
            plan.stdout.contains("replay: \(left): +\(scanned) −0 ~0 visits over 1 device"), "\(plan.stdout)")

        let apply = try await cli.run("regions", "apply", Self.regions, "--backfill", Self.since)
        #expect(apply.status == 0, "\(apply.stderr)")
        #expect(apply.stdout.contains("backfill since 2019-01-01T00:00:00.000Z: +"), "\(apply.stdout)")

        let fresh = try FencepostBinary()
        defer { fresh.cleanUp() }
        #expect(try await fresh.run("regions", "apply", Self.regions).status == 0)
        #expect(try await fresh.run("ingest", Self.trace).status == 0)
        for export in [["events", "export"], ["visits", "list", "--format", "csv"]] {
            let ours = try await cli.run(export)
            let theirs = try await fresh.run(export)
            #expect(ours.stdout == theirs.stdout, "\(export)")
        }
        // Nothing changed, nothing to do; the outbox carries the new rows.
        let again = try await cli.run("regions", "apply", Self.regions, "--backfill", Self.since)
        #expect(again.stdout.hasSuffix("backfill: no region changed\n"))
    }

    /// The trap: a trace ingested before its regions exist makes no events, and ingesting it
    /// again says already_seen; `apply --backfill` derives them from the stored fixes.
    @Test func regionsAddedAfterTheTraceGetItsEventsByBackfill() async throws {
        let cli = try FencepostBinary()
        defer { cli.cleanUp() }
        let ingest = try await cli.run("ingest", Self.trace)
        #expect(ingest.stderr.contains("--backfill SINCE"))
        #expect(try await cli.run("regions", "apply", Self.regions, "--backfill", "3650d").status == 0)
        let fresh = try FencepostBinary()
        defer { fresh.cleanUp() }
        #expect(try await fresh.run("regions", "apply", Self.regions).status == 0)
        #expect(try await fresh.run("ingest", Self.trace).status == 0)
        let ours = try await cli.run("events", "export")
        #expect(ours.stdout.split(separator: "\n").count > 90)
        #expect(ours.stdout == (try await fresh.run("events", "export")).stdout)
        #expect(try await cli.run("regions", "apply", Self.regions, "--backfill", "tomorrow").status == 64)
    }
}
