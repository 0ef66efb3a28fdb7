import AsyncHTTPClient
import FencepostTestSupport
import Foundation
import NIOCore
import NIOHTTP1
import Testing

/// `events export`'s time window, `tokens list|revoke`, and a workout route's geofence events.
@Suite struct EventsAndTokensCommandTests {
    @Test func sinceIsInclusiveAndUntilExclusiveInAnyOffset() async throws {
        let cli = try FencepostBinary()
        defer { cli.cleanUp() }
        #expect(
            try await cli.run("regions", "apply", cli.write("regions.geojson", IngestOptionsTests.region())).status == 0
        )
        #expect(try await cli.run("ingest", cli.write("walk.csv", IngestOptionsTests.excursion)).status == 0)
        func times(_ options: String...) async throws -> [String] {
            let export = try await cli.run(["events", "export"] + options)
            #expect(export.status == 0, "\(export.stderr)")
            return export.stdout.split(separator: "\n").dropFirst().map { String($0.split(separator: ",")[1]) }
        }
        let all = try await times()
        #expect(all.count == 4)
        #expect(try await times("--since", all[1]) == Array(all[1...]))
        #expect(try await times("--until", all[1]) == [all[0]])
        #expect(try await times("--since", all[1], "--until", all[3]) == Array(all[1..<3]))
        // The same instants written in other offsets: 2023-11-14T22:14:09.500Z is 23:14:09.5+01:00.
        #expect(all[0] == "2023-11-14T22:13:29.500Z")
        #expect(try await times("--since", "2023-11-14T23:13:29.5+01:00") == all)
        #expect(try await times("--since", "2023-11-14T23:13:29.501+01:00") == Array(all[1...]))
        #expect(try await times("--until", "2023-11-14T17:13:29.501-05:00") == [all[0]])
        let jsonl = try await cli.run("events", "export", "--format", "jsonl", "--since", all[2])
        #expect(jsonl.stdout.split(separator: "\n").count == 2)

        let bad = try await cli.run("events", "export", "--since", "yesterday")
        #expect(bad.status == 64 && bad.stderr.contains("--since is not an RFC 3339 time: yesterday"))
    }

    @Test func groupTokensAreCreatedForAGroupAndListedWithTheirScope() async throws {
        let cli = try FencepostBinary()
        defer { cli.cleanUp() }
        for arguments in [
            ["--scope", "group:night shift", "--name", "night"],
            ["--scope", "group:night shift", "--read-only", "--name", "night-view"],
        ] {
            let created = try await cli.run(["tokens", "create"] + arguments)
            #expect(created.status == 0 && created.stdout.hasPrefix("fp_"))
        }
        let rows = try await cli.run("tokens", "list").stdout.split(separator: "\n").map {
            Array($0.split(separator: "\t").prefix(2).map(String.init))
        }
        #expect(rows == [["night", "group:night shift"], ["night-view", "group-read:night shift"]])
        let refused = try await cli.run("tokens", "create", "--scope", "admin", "--read-only")
        #expect(refused.status == 64 && refused.stderr.contains("--read-only applies to --scope group:NAME"))
        let unknown = try await cli.run("tokens", "create", "--scope", "group:")
        #expect(unknown.status == 64 && unknown.stderr.contains("--scope must be admin, read, device:ID or group:NAME"))
    }

    @Test func tokensAreListedWithoutTheirSecretAndARevokedOneIsRefused() async throws {
        let cli = try FencepostBinary()
        defer { cli.cleanUp() }
        let ops = try await cli.run("tokens", "create", "--scope", "admin", "--name", "ops").stdout.trimmingCharacters(
            in: .whitespacesAndNewlines)
        let phone = try await cli.run("tokens", "create", "--scope", "device:phone", "--name", "phone").stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(ops.hasPrefix("fp_") && phone.hasPrefix("fp_") && ops != phone)

        let listed = try await cli.run("tokens", "list")
        let rows = listed.stdout.split(separator: "\n").map { $0.split(separator: "\t").map(String.init) }
        #expect(rows.map { Array($0.prefix(2)) } == [["ops", "admin"], ["phone", "device:phone"]])
        #expect(rows.allSatisfy { $0.count == 3 && $0[2].hasSuffix("Z") })
        #expect(!listed.stdout.contains(ops) && !listed.stdout.contains(phone), "the secret is shown once, at creation")
        let json = try await cli.run("tokens", "list", "--json").stdout
        let objects = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [[String: String]])
        #expect(
            objects.map { $0["name"] } == ["ops", "phone"] && objects.map { $0["scope"] } == ["admin", "device:phone"])

        let revoked = try await cli.run("tokens", "revoke", "phone")
        #expect(revoked.status == 0 && revoked.stderr.contains("revoked phone"))
        #expect(
            try await cli.run("tokens", "list").stdout.split(separator: "\n").map { $0.split(separator: "\t")[0] } == [
                "ops"
            ])
        let again = try await cli.run("tokens", "revoke", "phone")
        #expect(again.status == 1 && again.stderr.contains("no token named phone"))

        // The service started on this store refuses the revoked token and takes the other.
        let (server, port) = try await cli.serve()
        defer { server.terminate() }
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        do {
            for (token, expected) in [(phone, 401), (ops, 200)] {
                var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/v1/events")
                request.headers.add(name: "Authorization", value: "Bearer \(token)")
                #expect(try await client.execute(request, timeout: .seconds(10)).status.code == expected)
            }
        } catch {
            try await client.shutdown()
            throw error
        }
        try await client.shutdown()
    }

    /// A workout whose route (inline, as older exports write it) walks through a 50 m circle:
    /// the route's device gets the enter and exit, at the crossings (2 m/s from 100 m west:
    /// 25 s and 75 s in).
    @Test func aWorkoutRouteGivesGeofenceEvents() async throws {
        let cli = try FencepostBinary()
        defer { cli.cleanUp() }
        let park =
            #"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Point","coordinates":[-122.42,37.78]},"properties":{"id":"park","radius":50}}]}"#
        #expect(try await cli.run("regions", "apply", cli.write("park.geojson", park)).status == 0)
        let metresPerDegree = 111_195.08 * cos(37.78 * .pi / 180)
        let locations = (0...40).map { step in
            let seconds = step * 5
            let x = -100 + 2 * Double(seconds)
            let time = String(format: "2016-11-14 07:%02d:%02d -0700", 25 + (40 + seconds) / 60, (40 + seconds) % 60)
            return
                #"<Location date="\#(time)" latitude="37.78" longitude="\#(-122.42 + x / metresPerDegree)" altitude="20" horizontalAccuracy="5" verticalAccuracy="3" course="90" speed="2"/>"#
        }
        let export = """
            <?xml version="1.0" encoding="UTF-8"?>
            <HealthData locale="en_US">
             <Workout workoutActivityType="HKWorkoutActivityTypeWalking" duration="3.5" durationUnit="min" totalDistance="0.2" totalDistanceUnit="km" sourceName="Apple Watch" creationDate="2016-11-14 07:29:30 -0700" startDate="2016-11-14 07:25:40 -0700" endDate="2016-11-14 07:29:00 -0700">
              <WorkoutRoute sourceName="Jane's iPhone" creationDate="2016-11-14 07:29:30 -0700" startDate="2016-11-14 07:25:40 -0700" endDate="2016-11-14 07:29:00 -0700">
               \(locations.joined(separator: "\n   "))
              </WorkoutRoute>
             </Workout>
            </HealthData>
            """
        let imported = try await cli.run("health", "import", "--json", cli.write("export.xml", export))
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.stdout.contains(#""events":{"enter":1,"exit":1}"#))
        let rows = try await cli.run("events", "export", "--region", "park").stdout.split(separator: "\n").dropFirst()
            .map { $0.split(separator: ",").map(String.init) }
        #expect(rows.map { "\($0[2]) \($0[3])" } == ["enter Jane's iPhone", "exit Jane's iPhone"])
        #expect(rows.map { $0[1] } == ["2016-11-14T14:26:05.000Z", "2016-11-14T14:26:55.000Z"])
        let workout = try await cli.run("events", "export", "--kind", "workout", "--format", "jsonl").stdout
        #expect(workout.contains(#""route_device":"Jane's iPhone""#))
    }
}
