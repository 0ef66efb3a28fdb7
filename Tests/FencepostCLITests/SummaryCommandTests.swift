import FencepostTestSupport
import Foundation
import Testing

/// `fencepost summary` over a store's visits: cut at local midnight in the zone asked for.
@Suite struct SummaryCommandTests {
    /// A van parked in its depot (a 100 m circle) from 22:00 to 02:00 Zurich time, a fix a
    /// minute, arriving from and leaving to 1 km east.
    @Test func aNightAtTheDepotIsCutAtLocalMidnight() async throws {
        let cli = try FencepostBinary()
        defer { cli.cleanUp() }
        let regions = try cli.write(
            "depot.geojson",
            #"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Point","coordinates":[8.54,47.37]},"properties":{"id":"depot","name":"Depot","radius":100}}]}"#
        )
        let start = Timestamp("2026-11-25T21:50:00+01:00")
        var lines = ["device,time,lat,lon,accuracy"]
        for minute in 0...260 {
            let away = minute < 10 || minute > 250
            lines.append("van,\(start + Double(minute) * 60),47.37,\(away ? 8.553 : 8.54),5")
        }
        let trace = try cli.write("night.csv", lines.joined(separator: "\n") + "\n")
        #expect(try await cli.run("regions", "apply", regions).status == 0)
        #expect(try await cli.run("ingest", trace).status == 0)

        let csv = try await cli.run("summary", "--tz", "Europe/Zurich", "--format", "csv")
        #expect(csv.status == 0, "\(csv.stderr)")
        let all = csv.stdout.split(separator: "\n").dropFirst().map {
            $0.split(separator: ",", omittingEmptySubsequences: false)
        }
        // The depot's rows, and the van's movement rows (its trips to and from the depot).
        let rows = all.filter { $0[2] == "depot" }
        let moving = all.filter { $0[2].isEmpty }
        #expect(rows.count == 2, "\(csv.stdout)")
        #expect(moving.map { String($0[0]) } == ["2026-11-25", "2026-11-26"], "\(csv.stdout)")
        #expect(moving.allSatisfy { (Double($0[7]) ?? 0) > 500 }, "about 1 km each way: \(csv.stdout)")
        #expect(rows.map { String($0[0]) } == ["2026-11-25", "2026-11-26"])
        #expect(rows[0][6] == "2026-11-26T00:00:00.000+01:00", "the first day ends at local midnight")
        #expect(rows[1][5] == "2026-11-26T00:00:00.000+01:00", "the second begins there")

        let visits = try await cli.run("visits", "list", "--format", "json")
        let visit = try #require(
            (try JSONSerialization.jsonObject(with: Data(visits.stdout.utf8)) as? [[String: Any]])?.first)
        let entered = Timestamp(try #require(visit["entered_at"] as? String))
        let exited = Timestamp(try #require(visit["exited_at"] as? String))
        let inside = rows.map { Double($0[3]) ?? 0 }
        #expect(abs(inside.reduce(0, +) - (exited - entered)) < 0.2, "the days add up to the visit: \(inside)")
        #expect(abs(inside[0] - (Timestamp("2026-11-26T00:00:00+01:00") - entered)) < 0.2)

        let table = try await cli.run("summary", "--tz", "Europe/Zurich", "--by", "week")
        let depotLine = table.stdout.split(separator: "\n").first { $0.contains("Depot") } ?? ""
        #expect(depotLine.hasPrefix("2026-W48  van") && depotLine.contains(" 4:00:"), "\(table.stdout)")
        #expect(table.stdout.contains("(moving)"))

        for refused in [
            ["--tz", "Mars/Olympus"], ["--since", "yesterday"], ["--by", "year"], ["--since", "1d", "--until", "2d"],
        ] {
            #expect(try await cli.run(["summary"] + refused).status == 64, "\(refused)")
        }
    }
}

/// Seconds since 1970 of an RFC 3339 time, for tests.
private func Timestamp(_ text: String) -> Double {
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
    return (formatter.date(from: text) ?? ISO8601DateFormatter().date(from: text)!).timeIntervalSince1970
}
