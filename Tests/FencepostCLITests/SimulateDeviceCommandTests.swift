import FencepostCore
import FencepostTestSupport
import Foundation
import Testing

/// `fencepost simulate-device` on the project's sample bus route and its 36 stops.
@Suite struct SimulateDeviceCommandTests {
    static let regions = TestData.packageRoot.appendingPathComponent("regions/limerick-304-stops.geojson").path
    static let trace = TestData.packageRoot.appendingPathComponent("samples/bus304_to_UL_2019-02-18.gpx").path

    static func policies(_ output: String) throws -> [String: JSONValue] {
        let json = try JSONParser.parse(Array(output.utf8))
        var byName: [String: JSONValue] = [:]
        for policy in json["policies"]?.arrayValue ?? [] { byName[policy["policy"]?.stringValue ?? ""] = policy }
        return byName
    }

    @Test func withABudgetOfTwentyTheMonitoredSetFindsEveryStopTheFirstTwentyByIDCannot() async throws {
        let cli = try FencepostBinary()
        defer { cli.cleanUp() }
        let run = try await cli.run(
            "simulate-device", "--json", "--delay", "0", "--regions", Self.regions, Self.trace)
        #expect(run.status == 0, "\(run.stderr)")
        let policies = try Self.policies(run.stdout)
        let ours = try #require(policies["fencepost"])
        // The bus stops at or passes all 36 stops; the server's monitor sees 36 visits.
        #expect(ours["visits"]?.numberValue == 36)
        #expect(ours["recall"]?.numberValue == 1)
        #expect(ours["missed_not_monitored"]?.numberValue == 0)
        #expect((ours["replans"]?.numberValue ?? 0) >= 1, "36 stops do not fit 19 slots: it must re-plan")
        // The first 20 stops by id are all a phone that ignores the budget monitors.
        let first = try #require(policies["first-n"])
        #expect(first["found"]?.numberValue == 20)
        #expect(first["missed_not_monitored"]?.numberValue == 16)
        #expect(first["replans"]?.numberValue == 0)
        #expect(policies["nearest"] != nil)
    }

    @Test func aDelayLeavesOutVisitsShorterThanItAndTheTableSaysSo() async throws {
        let cli = try FencepostBinary()
        defer { cli.cleanUp() }
        let run = try await cli.run(
            "simulate-device", "--delay", "30", "--policy", "fencepost", "--regions", Self.regions, Self.trace)
        #expect(run.status == 0)
        let lines = run.stdout.split(separator: "\n")
        #expect(lines.count == 3)
        #expect(lines.first?.contains("36 visits (12 shorter than the OS's delay)") == true)
        #expect(lines.last?.hasPrefix("fencepost") == true)
        let bad = try await cli.run("simulate-device", "--policy", "psychic", "--regions", Self.regions, Self.trace)
        #expect(bad.status == 64)
        #expect(bad.stderr.contains("psychic"))
    }
}
