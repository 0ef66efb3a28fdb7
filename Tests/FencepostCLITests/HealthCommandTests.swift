import FencepostTestSupport
import Foundation
import Testing

@Suite(.serialized) struct HealthCommandTests {
    static func steps(_ start: String, _ end: String, _ value: Int, created: String) -> String {
        "<Record type=\"HKQuantityTypeIdentifierStepCount\" sourceName=\"iPhone\" unit=\"count\" creationDate=\"\(created)\" startDate=\"\(start)\" endDate=\"\(end)\" value=\"\(value)\"/>"
    }

    static func export(_ records: String...) -> String {
        "<?xml version=\"1.0\"?>\n<HealthData locale=\"en_US\">\n" + records.joined(separator: "\n")
            + "\n</HealthData>\n"
    }

    @Test func reimportAddsNothingAndANewerExportUpdatesTheDay() async throws {
        let cli = try FencepostBinary()
        defer { cli.cleanUp() }
        let morning = Self.steps(
            "2023-01-14 08:00:00 -0500", "2023-01-14 09:00:00 -0500", 100, created: "2023-01-14 09:01:00 -0500")
        let evening = Self.steps(
            "2023-01-14 18:00:00 -0500", "2023-01-14 19:00:00 -0500", 50, created: "2023-01-14 19:01:00 -0500")
        let first = try cli.write("first.xml", Self.export(morning))
        let second = try cli.write("second.xml", Self.export(morning, evening))

        #expect(try await cli.run("health", "import", first).status == 0)
        let queued = try await cli.run("queue", "status", "--format", "json").stdout
        let again = try await cli.run("health", "import", first, "--json")
        #expect(again.status == 0 && again.stdout.contains("\"created\":{}") && again.stdout.contains("\"updated\":{}"))
        #expect(
            try await cli.run("queue", "status", "--format", "json").stdout == queued, "re-importing queues nothing")

        let newer = try await cli.run("health", "import", second, "--json")
        #expect(newer.stdout.contains("\"updated\":{\"steps\":1}"))
        let events = try await cli.run("events", "export", "--format", "jsonl", "--kind", "steps").stdout
        #expect(events.split(separator: "\n").count == 1, "an update, not a duplicate")
        #expect(events.contains("\"value\":150"))
        #expect(
            try await cli.run("queue", "status", "--format", "json").stdout.contains("\"pending\":2"),
            "both versions of the day queued")
        #expect(try await cli.run("health", "sources").stdout.contains("iPhone"))
    }

    @Test func aMalformedExportIsRefusedAndWritesNothing() async throws {
        let cli = try FencepostBinary()
        defer { cli.cleanUp() }
        let broken = try cli.write(
            "broken.xml",
            Self.export(
                Self.steps(
                    "2023-01-14 08:00:00 -0500", "2023-01-14 09:00:00 -0500", 100, created: "2023-01-14 09:01:00 -0500"),
                "<Record type=\"HKQuantityTypeIdentifierStepCount\" sourceName=\"iPhone\" startDate=\"yesterday\" endDate=\"today\" value=\"1\"/>"
            ))
        let result = try await cli.run("health", "import", broken)
        #expect(result.status == 1)
        #expect(result.stderr.contains("broken.xml:4: unknown date format \"yesterday\""))
        #expect(try await cli.run("events", "export").stdout == "id,time,kind,device,region,visit_id,flags\n")
    }

    static let generator = TestData.packageRoot.deletingLastPathComponent().appendingPathComponent(
        "shared/bench/gen_health_export.py"
    ).path

    /// An import killed (SIGKILL) while it reads the export, and again once its workout routes
    /// have written geofence events but before the health events are committed, then run
    /// again: the store converges to what one clean import gives. Each kill is checked to have
    /// landed while the import ran, and the second one to have left that partial state.
    @Test(
        .enabled(
            if: FileManager.default.fileExists(atPath: generator),
            "needs ../shared/bench/gen_health_export.py beside the checkout"))
    func killedMidImportThenRerunConverges() async throws {
        let clean = try FencepostBinary()
        let killed = try FencepostBinary()
        defer {
            clean.cleanUp()
            killed.cleanUp()
        }
        let export = clean.path("export.zip")
        let generated = try await offThePool {
            let python = Process()
            python.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            python.arguments = ["python3", Self.generator, "--days", "20", "--seed", "2", "--out", export]
            try python.run()
            python.waitUntilExit()
            return python.terminationStatus
        }
        try #require(generated == 0)
        // The generator's workout routes are loops from home (New York, or Berlin when away):
        // regions there make the routes write enter and exit events.
        let homes =
            #"{"type":"FeatureCollection","features":["#
            + #"{"type":"Feature","geometry":{"type":"Point","coordinates":[-73.9866,40.7306]},"properties":{"id":"home","radius":150}},"#
            + #"{"type":"Feature","geometry":{"type":"Point","coordinates":[13.405,52.52]},"properties":{"id":"berlin","radius":150}}]}"#
        for cli in [clean, killed] {
            #expect(try await cli.run("regions", "apply", cli.write("homes.geojson", homes)).status == 0)
        }
        #expect(try await clean.run("health", "import", export).status == 0)
        let cleanCounts = try await Self.counts(clean)
        #expect(cleanCounts.route > 0 && cleanCounts.health > 0)

        // While it reads the export: nothing is written yet.
        let reading = try killed.start("health", "import", export)
        try await Task.sleep(for: .milliseconds(200))
        // Only while it runs: an ended process's id may be another's by now.
        if reading.isRunning { kill(reading.processIdentifier, SIGKILL) }
        try await FencepostBinary.waitForExit(reading)
        #expect(reading.terminationReason == .uncaughtSignal, "the import was still running")
        #expect(try await Self.counts(killed) == (0, 0))

        // Once routes have written events, before the health events are committed.
        let routing = try killed.start("health", "import", export)
        var partial = (route: 0, health: 0)
        while partial.route == 0, routing.isRunning {
            partial = try await Self.counts(killed)
        }
        // Only while it runs: an ended process's id may be another's by now.
        if routing.isRunning { kill(routing.processIdentifier, SIGKILL) }
        try await FencepostBinary.waitForExit(routing)
        #expect(routing.terminationReason == .uncaughtSignal, "the import was still running")
        let left = try await Self.counts(killed)
        #expect(left.route > 0 && left.health == 0, "routes written, health events not: \(left)")

        #expect(try await killed.run("health", "import", export).status == 0)
        let events = try await (
            killed.run("events", "export", "--format", "jsonl").stdout,
            clean.run("events", "export", "--format", "jsonl").stdout
        )
        #expect(events.0 == events.1)
        let queue = try await (
            killed.run("queue", "status", "--format", "json").stdout,
            clean.run("queue", "status", "--format", "json").stdout
        )
        #expect(queue.0 == queue.1)
    }

    /// The store's geofence events (from workout routes) and health events.
    static func counts(_ cli: FencepostBinary) async throws -> (route: Int, health: Int) {
        let lines = try await cli.run("events", "export").stdout.split(separator: "\n").dropFirst()
        let route = lines.filter { $0.contains(",enter,") || $0.contains(",exit,") }.count
        return (route, lines.count - route)
    }
}
