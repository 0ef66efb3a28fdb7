import FencepostTestSupport
import Foundation
import Testing

@Suite(.serialized) struct HealthCommandTests {
    static func steps(_ start: String, _ end: String, _ value: Int, created: String) -> String {
        "<Record type=\"HKQuantityTypeIdentifierStepCount\" sourceName=\"iPhone\" unit=\"count\" creationDate=\"\(created)\" startDate=\"\(start)\" endDate=\"\(end)\" value=\"\(value)\"/>"
    }

    static func export(_ records: String...) -> String {
        "<?xml version=\"1.0\"?>\n<HealthData locale=\"en_US\">\n" + records.joined(separator: "\n") + "\n</HealthData>\n"
    }

    @Test func reimportAddsNothingAndANewerExportUpdatesTheDay() throws {
        let cli = try FencepostBinary()
        defer { cli.cleanUp() }
        let morning = Self.steps("2023-01-14 08:00:00 -0500", "2023-01-14 09:00:00 -0500", 100, created: "2023-01-14 09:01:00 -0500")
        let evening = Self.steps("2023-01-14 18:00:00 -0500", "2023-01-14 19:00:00 -0500", 50, created: "2023-01-14 19:01:00 -0500")
        let first = try cli.write("first.xml", Self.export(morning))
        let second = try cli.write("second.xml", Self.export(morning, evening))

        #expect(try cli.run("health", "import", first).status == 0)
        let queued = try cli.run("queue", "status", "--format", "json").stdout
        let again = try cli.run("health", "import", first, "--json")
        #expect(again.status == 0 && again.stdout.contains("\"created\":{}") && again.stdout.contains("\"updated\":{}"))
        #expect(try cli.run("queue", "status", "--format", "json").stdout == queued, "re-importing queues nothing")

        let newer = try cli.run("health", "import", second, "--json")
        #expect(newer.stdout.contains("\"updated\":{\"steps\":1}"))
        let events = try cli.run("events", "export", "--format", "jsonl", "--kind", "steps").stdout
        #expect(events.split(separator: "\n").count == 1, "an update, not a duplicate")
        #expect(events.contains("\"value\":150"))
        #expect(try cli.run("queue", "status", "--format", "json").stdout.contains("\"pending\":2"), "both versions of the day queued")
        #expect(try cli.run("health", "sources").stdout.contains("iPhone"))
    }

    @Test func aMalformedExportIsRefusedAndWritesNothing() throws {
        let cli = try FencepostBinary()
        defer { cli.cleanUp() }
        let broken = try cli.write("broken.xml", Self.export(
            Self.steps("2023-01-14 08:00:00 -0500", "2023-01-14 09:00:00 -0500", 100, created: "2023-01-14 09:01:00 -0500"),
            "<Record type=\"HKQuantityTypeIdentifierStepCount\" sourceName=\"iPhone\" startDate=\"yesterday\" endDate=\"today\" value=\"1\"/>"))
        let result = try cli.run("health", "import", broken)
        #expect(result.status == 1)
        #expect(result.stderr.contains("broken.xml:4: unknown date format \"yesterday\""))
        #expect(try cli.run("events", "export").stdout == "id,time,kind,device,region,visit_id,flags\n")
    }

    @Test func killedMidImportThenRerunConverges() throws {
        let script = TestData.packageRoot.deletingLastPathComponent().appendingPathComponent("shared/bench/gen_health_export.py").path
        guard FileManager.default.fileExists(atPath: script) else { return }
        let clean = try FencepostBinary(), killed = try FencepostBinary()
        defer { clean.cleanUp(); killed.cleanUp() }
        let export = clean.path("export.zip")
        let python = Process()
        python.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        python.arguments = ["python3", script, "--days", "10", "--seed", "2", "--out", export]
        try python.run()
        python.waitUntilExit()
        try #require(python.terminationStatus == 0)

        #expect(try clean.run("health", "import", export).status == 0)
        for delay in [0.2, 0.8, 1.5] {
            let process = try killed.start("health", "import", export)
            Thread.sleep(forTimeInterval: delay)
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        #expect(try killed.run("health", "import", export).status == 0)
        #expect(try killed.run("events", "export", "--format", "jsonl").stdout == clean.run("events", "export", "--format", "jsonl").stdout)
        #expect(try killed.run("queue", "status", "--format", "json").stdout == clean.run("queue", "status", "--format", "json").stdout)
    }
}
