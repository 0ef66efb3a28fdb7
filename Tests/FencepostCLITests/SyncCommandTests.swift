import FencepostServerTestSupport
import FencepostTestSupport
import Foundation
import Testing

/// `fencepost sync` between two stores, end to end: the backend is `fencepost serve` in a
/// process of its own, the client the CLI, and faults come from the proxy between them.
@Suite("fencepost sync, end to end", .serialized)
struct SyncCommandTests {
    static let busRegions = TestData.packageRoot.appendingPathComponent("regions").path
    static let busTrace = TestData.packageRoot.appendingPathComponent("samples/bus304_to_UL_2019-02-18.gpx").path

    /// A backend store with an admin and a device token, served on a free port.
    struct Backend {
        let cli: FencepostBinary
        let server: Process
        let url: String
        let admin: String
        let device: String

        init() async throws {
            cli = try FencepostBinary()
            admin = try await cli.run("tokens", "create", "--scope", "admin", "--name", "edge").stdout
                .trimmingCharacters(in: .whitespacesAndNewlines)
            device = try await cli.run("tokens", "create", "--scope", "device:304.1", "--name", "bus").stdout
                .trimmingCharacters(in: .whitespacesAndNewlines)
            let (server, port) = try await cli.serve()
            self.server = server
            url = "http://127.0.0.1:\(port)"
        }

        /// Stops the server (SIGTERM) and removes its store once it has exited, without
        /// waiting here: a `defer` cannot await, and must not block the cooperative pool.
        func stop() {
            server.terminate()
            let (server, cli) = (server, cli)
            Thread {
                server.waitUntilExit()
                cli.cleanUp()
            }.start()
        }
    }

    /// A client store holding the bus route's stops, its journey and a day of steps.
    static func client() async throws -> FencepostBinary {
        let cli = try FencepostBinary()
        #expect(try await cli.run("regions", "apply", busRegions).status == 0)
        #expect(try await cli.run("ingest", busTrace).status == 0)
        let steps = HealthCommandTests.steps(
            "2019-02-18 08:00:00 +0000", "2019-02-18 09:00:00 +0000", 1200, created: "2019-02-18 09:01:00 +0000")
        #expect(
            try await cli.run(
                "health", "import", "--owner", "304.1", cli.write("export.xml", HealthCommandTests.export(steps))
            ).status == 0)
        return cli
    }

    /// What a store holds, as its exports show it: events (with properties) and visits.
    static func contents(_ cli: FencepostBinary) async throws -> (events: [String], visits: String) {
        let events = try await cli.run("events", "export", "--format", "jsonl").stdout.split(separator: "\n").map(
            String.init
        ).sorted()
        return (events, try await cli.run("visits", "list", "--format", "json").stdout)
    }

    /// Each monitored region's id and content hash.
    static func regions(_ cli: FencepostBinary) async throws -> [String] {
        let text = try await cli.run("regions", "list", "--format", "json").stdout
        let list = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [[String: Any]] ?? []
        return list.map { "\($0["id"] ?? "") \($0["content_hash"] ?? "")" }
    }

    static func status(_ cli: FencepostBinary) async throws -> [String: Double] {
        let text = try await cli.run("sync", "status", "--format", "json").stdout
        let object = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] ?? [:]
        return object.compactMapValues { $0 as? Double }
    }

    @Test(
        "push, a kill -9 in the middle, a second push while one runs, and a re-run: the backend holds exactly the client's events and visits"
    )
    func pushKillAndRerun() async throws {
        let backend = try await Backend()
        defer { backend.stop() }
        let client = try await Self.client()
        defer { client.cleanUp() }
        let queued = try await Self.status(client)["pending"] ?? 0
        #expect(queued > 200)

        // Slowed by the proxy (each request held 0.3 s), the push takes several seconds.
        let proxy = try await FaultProxy.start(upstream: backend.url)
        proxy.outage(.delay(seconds: 0.3))
        let pushing = try client.start("sync", "push", "--to", proxy.url, "--token", backend.admin, "--batch", "10")
        // Wait until some batches are acknowledged (the push is under way), then interfere.
        let deadline = Date().addingTimeInterval(20)
        while try await Self.status(client)["delivered"] ?? 0 < 20, Date() < deadline {
            try await Task.sleep(for: .milliseconds(100))
        }
        let second = try await client.run("sync", "push", "--to", proxy.url, "--token", backend.admin)
        #expect(second.status == 75)
        #expect(second.stderr.contains("another sync is running"))
        kill(pushing.processIdentifier, SIGKILL)
        try await FencepostBinary.waitForExit(pushing)
        proxy.endOutage()

        let midway = try await Self.status(client)
        #expect((midway["delivered"] ?? 0) > 0 && (midway["delivered"] ?? 0) < queued)

        let rerun = try await client.run("sync", "push", "--to", proxy.url, "--token", backend.admin, "--json")
        await proxy.stop()
        #expect(rerun.status == 0, "\(rerun.stderr)")
        #expect(rerun.stdout.contains(#""ending":"drained""#))
        let done = try await Self.status(client)
        #expect(done["pending"] == 0 && done["inflight"] == 0 && done["dead"] == 0 && done["delivered"] == queued)
        let (clientEvents, clientVisits) = try await Self.contents(client)
        let (backendEvents, backendVisits) = try await Self.contents(backend.cli)
        #expect(backendEvents.count == clientEvents.count && clientEvents.count > 90)
        #expect(backendEvents == clientEvents)
        #expect(backendVisits == clientVisits)
        #expect(Set(backendEvents).count == backendEvents.count)
        let (backendRegions, clientRegions) = try await (Self.regions(backend.cli), Self.regions(client))
        #expect(backendRegions == clientRegions && clientRegions.count == 36)

        // Nothing left: a further push sends nothing and exits 0.
        let idle = try await client.run("sync", "push", "--to", backend.url, "--token", backend.admin, "--json")
        #expect(idle.status == 0 && idle.stdout.contains(#""requests":0"#))
    }

    @Test(
        "rejected mutations are listed with the backend's reason, exit 2, and go through after retry with a token that may send them"
    )
    func deadLetters() async throws {
        let backend = try await Backend()
        defer { backend.stop() }
        let client = try await Self.client()
        defer { client.cleanUp() }

        // The device token may send the bus's events and visits, not the stops (regions).
        let refused = try await client.run("sync", "push", "--to", backend.url, "--token", backend.device)
        #expect(refused.status == 2)
        #expect(refused.stderr.contains("36 dead-lettered"))
        let listed = try await client.run("sync", "dead-letter", "list", "--format", "json").stdout
        #expect(listed.contains("rejected: regions can only be changed with an admin token"))
        let first = try await client.run("sync", "dead-letter", "list").stdout.split(separator: "\n")[1].split(
            separator: " ")[0]
        #expect(try await client.run("sync", "dead-letter", "retry", String(first)).status == 0)
        #expect(try await Self.status(client)["dead"] == 35)
        #expect(try await client.run("sync", "dead-letter", "retry", "--all").status == 0)
        let fixed = try await client.run("sync", "push", "--to", backend.url, "--token", backend.admin)
        #expect(fixed.status == 0, "\(fixed.stderr)")
        #expect(try await Self.status(client)["dead"] == 0)
        let (backendRegions, clientRegions) = try await (Self.regions(backend.cli), Self.regions(client))
        #expect(backendRegions == clientRegions && clientRegions.count == 36)
    }

    @Test("pull takes the backend's regions through the reconciler and keeps a local delete that is not pushed yet")
    func pullRegions() async throws {
        let backend = try await Backend()
        defer { backend.stop() }
        #expect(try await backend.cli.run("regions", "apply", Self.busRegions).status == 0)
        let client = try FencepostBinary()
        defer { client.cleanUp() }

        let pulled = try await client.run("sync", "pull", "--from", backend.url, "--token", backend.device, "--json")
        #expect(pulled.status == 0, "\(pulled.stderr)")
        #expect(pulled.stdout.contains(#""added":36"#))
        let (backendRegions, clientRegions) = try await (Self.regions(backend.cli), Self.regions(client))
        #expect(backendRegions == clientRegions && clientRegions.count == 36)
        #expect(try await Self.status(client)["pending"] == 0, "pulled regions are not queued back")

        // Locally, one stop is removed (its delete waits to be pushed); the backend renames it meanwhile.
        let text = try String(contentsOfFile: Self.busRegions + "/limerick-304-stops.geojson", encoding: .utf8)
        var features =
            (try JSONSerialization.jsonObject(with: Data(text.utf8)) as! [String: Any])["features"] as! [[String: Any]]
        var removed = features.removeFirst()
        var properties = removed["properties"] as! [String: Any]
        let removedID = properties["id"] as! String
        #expect(
            try await client.run("regions", "apply", client.write("fewer/stops.geojson", Self.collection(features)))
                .status == 0)
        properties["name"] = "renamed on the backend"
        removed["properties"] = properties
        #expect(
            try await backend.cli.run(
                "regions", "apply", backend.cli.write("edited/stops.geojson", Self.collection([removed] + features))
            ).status == 0)

        let again = try await client.run("sync", "pull", "--from", backend.url, "--token", backend.device, "--json")
        #expect(again.status == 0)
        #expect(again.stdout.contains(#""kept_local":["\#(removedID)"]"#))
        let remaining = try await Self.regions(client)
        #expect(remaining.count == 35 && !remaining.contains { $0.hasPrefix(removedID + " ") })
    }

    static func collection(_ features: [[String: Any]]) throws -> String {
        String(
            decoding: try JSONSerialization.data(withJSONObject: ["type": "FeatureCollection", "features": features]),
            as: UTF8.self)
    }
}
