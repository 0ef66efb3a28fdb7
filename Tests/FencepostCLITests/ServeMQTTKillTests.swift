import AsyncHTTPClient
import FencepostTestSupport
import Foundation
import NIOCore
import Testing

/// `fencepost serve` taking OwnTracks over MQTT as a real process, SIGKILLed while messages
/// are in flight and its broker restarted under it: the store ends as an `ingest` of the same
/// fixes, nothing lost and nothing twice.
@Suite(
    "fencepost serve over MQTT: kill -9 and a broker restart", .serialized,
    .enabled(if: TestBroker.python != nil, "needs FENCEPOST_TEST_PYTHON (tools/test)"))
struct ServeMQTTKillTests {
    /// 13 fixes a minute apart through home for each device, the devices' walks interleaved.
    static func fixes(devices: Range<Int>) -> [(device: String, time: Int, lat: Double)] {
        var fixes: [(device: String, time: Int, lat: Double)] = []
        for step in 0...12 {
            let lat = 46.9946 + Double(step) * 0.0009
            for device in devices { fixes.append(("u\(device)/phone", 1_750_000_000 + step * 60 + device, lat)) }
        }
        return fixes
    }

    static let publisher = """
        import sys, json, paho.mqtt.client as mqtt
        c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=sys.argv[3] + "-publisher")
        c.max_inflight_messages_set(100)
        c.connect(sys.argv[1], int(sys.argv[2])); c.loop_start()
        sent = []
        for device, tst, lat in json.loads(open(sys.argv[4]).read()):
            payload = json.dumps({"_type": "location", "lat": lat, "lon": 8.0, "tst": tst, "acc": 5, "tid": "ph"})
            sent.append(c.publish(sys.argv[3] + "/" + device, payload, qos=1))
        for info in sent: info.wait_for_publish(60)
        c.disconnect(); c.loop_stop()
        """

    struct Broker {
        let name = "kill-\(UUID().uuidString.prefix(8))"
        let tool = TestData.packageRoot.appendingPathComponent("tools/mosquitto").path

        func run(_ arguments: String...) async throws -> String {
            let tool = self.tool
            return try await offThePool { try Self.run(tool, arguments) }
        }

        static func run(_ tool: String, _ arguments: [String]) throws -> String {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: tool)
            process.arguments = arguments
            let output = Pipe()
            process.standardOutput = output
            try process.run()
            let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            // Reaped here: Foundation's waitUntilExit was seen never to return for this script
            // (whose daemon outlives it).
            var status: Int32 = 0
            waitpid(process.processIdentifier, &status, 0)
            guard status == 0 else {
                throw FencepostBinary.ServeFailure(stderr: "tools/mosquitto \(arguments)")
            }
            return text.trimmingCharacters(in: .whitespacesAndNewlines)
        }
    }

    static func metric(_ client: HTTPClient, port: Int, _ series: String) async -> Double? {
        guard
            let response = try? await client.execute(
                HTTPClientRequest(url: "http://127.0.0.1:\(port)/metrics"), timeout: .seconds(5)),
            let body = try? await response.body.collect(upTo: 1 << 22)
        else { return nil }
        return String(buffer: body).split(separator: "\n").first { $0.hasPrefix(series + " ") }.flatMap {
            Double($0.split(separator: " ").last!)
        }
    }

    static func waitFor(seconds: Double = 60, _ done: () async throws -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while ContinuousClock.now < deadline {
            if try await done() { return true }
            try await Task.sleep(for: .milliseconds(50))
        }
        return false
    }

    @Test("SIGKILL while messages are in flight, then a broker restart: the store equals an ingest of the same fixes")
    func killedAndRestarted() async throws {
        let broker = Broker()
        let url = try await broker.run("start", broker.name)
        defer { _ = try? Broker.run(broker.tool, ["stop", broker.name]) }
        let binary = try FencepostBinary()
        defer { binary.cleanUp() }
        #expect(
            try await binary.run("regions", "apply", binary.write("regions/home.geojson", ServeCommandTests.region))
                .status == 0)
        let base = "ot"
        let config = try binary.write(
            "serve.json",
            // Fixes of 2025, which the live writer would flag `replayed` (a file's ingest never
            // does): the flag is off for the comparison.
            #"{"replayed_after_seconds":0,"mqtt":{"url":"\#(url)","client_id":"fencepost-kill","topics":["\#(base)/+/+"]}}"#
        )
        let first = Self.fixes(devices: 0..<20)
        let second = Self.fixes(devices: 20..<30)
        func messagesFile(_ fixes: [(device: String, time: Int, lat: Double)], _ name: String) throws -> String {
            try binary.write(
                name, "[" + fixes.map { #"["\#($0.device)",\#($0.time),\#($0.lat)]"# }.joined(separator: ",") + "]")
        }
        func publish(_ file: String) throws -> Process {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: TestBroker.python!)
            let port = url.split(separator: ":").last.map(String.init)!
            process.arguments = ["-c", Self.publisher, "127.0.0.1", port, base, file]
            try process.run()
            return process
        }
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        do {
            var (server, port) = try await binary.serve("--config", config)
            #expect(try await Self.waitFor { await Self.metric(client, port: port, "fencepost_mqtt_connected") == 1 })
            // Publish 260 messages; kill serve once it has taken some of them, before it took all.
            let publisher = try publish(try messagesFile(first, "first.json"))
            #expect(
                try await Self.waitFor {
                    (await Self.metric(
                        client, port: port,
                        #"fencepost_protocol_messages_total{protocol="owntracks_mqtt",type="location"}"#) ?? 0) >= 20
                })
            kill(server.processIdentifier, SIGKILL)
            try await FencepostBinary.waitForExit(server)
            try await FencepostBinary.waitForExit(publisher)
            #expect(publisher.terminationStatus == 0)

            // Again: what was not acknowledged comes again (and what was committed is dropped).
            (server, port) = try await binary.serve("--config", config)
            defer { if server.isRunning { server.terminate() } }
            #expect(try await Self.waitFor { await Self.metric(client, port: port, "fencepost_mqtt_connected") == 1 })
            // The broker restarts under the running service, which connects again and goes on.
            _ = try await broker.run("restart", broker.name)
            #expect(try await Self.waitFor { await Self.metric(client, port: port, "fencepost_mqtt_connected") == 1 })
            let late = try publish(try messagesFile(second, "second.json"))
            try await FencepostBinary.waitForExit(late)
            #expect(late.terminationStatus == 0)

            // The reference: the same fixes through `fencepost ingest` into a store of its own.
            let csv =
                "device,time,lat,lon,accuracy\n"
                + (first + second).map {
                    "\($0.device),\(Date(timeIntervalSince1970: Double($0.time)).ISO8601Format()),\($0.lat),8.0,5"
                }.joined(separator: "\n")
            let referenceDB = binary.path("reference.db")
            #expect(
                try await binary.run("--db", referenceDB, "regions", "apply", binary.path("regions/home.geojson"))
                    .status == 0)
            #expect(try await binary.run("--db", referenceDB, "ingest", try binary.write("all.csv", csv)).status == 0)
            let expected = try await binary.run("--db", referenceDB, "events", "export", "--format", "csv").stdout
            #expect(expected.split(separator: "\n").count == 1 + 2 * 30)
            var actual = ""
            _ = try await Self.waitFor {
                actual = try await binary.run("events", "export", "--format", "csv").stdout
                return actual == expected
            }
            #expect(actual == expected)
            server.terminate()
            try await FencepostBinary.waitForExit(server)
        } catch {
            try await client.shutdown()
            throw error
        }
        try await client.shutdown()
    }
}
