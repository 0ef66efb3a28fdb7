import FencepostTestSupport
import Foundation

extension KillCampaign {
    /// `serve` taking OwnTracks over MQTT from `devices` phones publishing at QoS 1 once a
    /// second for `seconds` s through a mosquitto of its own (tools/mosquitto), SIGKILLed
    /// `kills` times at random moments and restarted, the broker restarted once half-way. When
    /// the phones are done and serve has taken everything, the store must hold what an `ingest`
    /// of the same fixes makes: every event, visit and outbox row, once (devices' states aside:
    /// a live writer's and a file's bookkeeping differ), and the same exports.
    func mqtt(devices: Int, seconds: Int, kills: Int) async throws -> Result {
        let tools = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let broker = "chaos-\(seed)"
        let url = try Self.tool(tools.appendingPathComponent("mosquitto").path, ["start", broker])
        defer { _ = try? Self.tool(tools.appendingPathComponent("mosquitto").path, ["stop", broker]) }
        let python = try Self.tool(tools.appendingPathComponent("python").path, [])
        let port = String(url.split(separator: ":").last!)

        // Each phone walks north through home (600 m either side; 11 m/s over 60 s), one fix a second.
        var fixes: [(device: String, time: Int, lat: Double)] = []
        for second in 0..<seconds {
            let lat = 46.997 + 0.006 * Double(second) / Double(seconds)
            for device in 0..<devices { fixes.append(("u\(device)/phone", 1_750_000_000 + second, lat)) }
        }
        let template = work.appendingPathComponent("mqtt-template.db").path
        remove(template)
        let regions = work.appendingPathComponent("mqtt-home.geojson").path
        try Data(
            #"{"type":"FeatureCollection","features":[{"type":"Feature","id":"home","geometry":{"type":"Point","coordinates":[8.0,47.0]},"properties":{"radius":100}}]}"#
                .utf8
        ).write(to: URL(fileURLWithPath: regions))
        try fencepost(template).succeed(["regions", "apply", regions])

        // The reference: `ingest` of the same fixes.
        let csv = work.appendingPathComponent("mqtt-fixes.csv").path
        try Data(
            ("device,time,lat,lon,accuracy\n"
                + fixes.map {
                    "\($0.device),\(Date(timeIntervalSince1970: Double($0.time)).ISO8601Format()),\($0.lat),8.0,5"
                }.joined(separator: "\n")).utf8
        ).write(to: URL(fileURLWithPath: csv))
        let baseline = try self.baseline("mqtt", template: template, arguments: ["ingest", csv])
        log(
            "mqtt: \(fixes.count) fixes of \(devices) devices; an ingest makes \(baseline.contents.count("event")) events"
        )

        let database = try copy(template, to: "mqtt-trial.db")
        defer { remove(database) }
        let config = work.appendingPathComponent("mqtt-serve.json").path
        // The fixes are of a day in 2025, which the live writer would flag `replayed`; an ingest
        // of a file flags nothing, so the flag is turned off for the comparison.
        try Data(
            #"{"replayed_after_seconds":0,"mqtt":{"url":"\#(url)","client_id":"chaos","topics":["owntracks/+/+"]}}"#
                .utf8
        ).write(
            to: URL(fileURLWithPath: config))
        var served = try await Self.subscribed(fencepost(database), config: config)

        let messages = work.appendingPathComponent("mqtt-messages.json").path
        try Data(
            ("[" + fixes.map { #"["\#($0.device)",\#($0.time),\#($0.lat)]"# }.joined(separator: ",") + "]").utf8
        ).write(to: URL(fileURLWithPath: messages))
        let phones = Process()
        phones.executableURL = URL(fileURLWithPath: python)
        phones.arguments = ["-c", Self.phones, port, messages, String(devices)]
        try phones.run()

        var result = Result(scenario: "mqtt")
        var random = SplitMix64(seed: seed)
        let began = Date()
        for kill in 1...kills {
            try await Task.sleep(for: .seconds(Double(seconds) / Double(kills) * (0.3 + 0.7 * random.unit())))
            let process = served.process
            let outcome = try await offThePool { Killer.kill(process, store: database) }
            if !outcome.landed { try await offThePool { process.waitUntilExit() } }
            served.output.remove()
            result.trials += 1
            if outcome.landed { result.killsLanded += 1 }
            if outcome.midTransaction { result.midTransaction += 1 }
            if kill == kills / 2 + 1 {
                _ = try Self.tool(tools.appendingPathComponent("mosquitto").path, ["restart", broker])
                log("mqtt: the broker restarted")
            }
            served = try await Self.subscribed(fencepost(database), config: config)
            log(
                "mqtt kill \(kill)/\(kills): \(outcome.landed ? "killed" : "had ended")\(outcome.midTransaction ? " mid-transaction" : "")"
            )
        }
        try await offThePool { phones.waitUntilExit() }
        if phones.terminationStatus != 0 {
            result.rerunFailures += 1
            result.examples.append("the phones' publisher exited \(phones.terminationStatus)")
        }
        // serve takes what the broker still holds for it.
        let deadline = Date().addingTimeInterval(120)
        while Date() < deadline, try exports(database) != baseline.exports { try await Task.sleep(for: .seconds(1)) }
        try await served.stop()
        let integrity = try StoreContents.integrityCheck(database)
        if integrity != "ok" { result.integrityFailures += 1 }
        result.add(
            try StoreContents.read(database).compared(
                to: baseline.contents, kinds: baseline.contents.rows.keys.filter { $0 != "device" }))
        if try exports(database) != baseline.exports { result.exportsDiffering += 1 }
        result.seconds = Date().timeIntervalSince(began)
        log("mqtt: lost \(result.lost), duplicated \(result.duplicated), changed \(result.changed)")
        return result
    }

    /// The phones: paho-mqtt, QoS 1, a persistent session of their own, each second's fixes
    /// published together and paced to the clock.
    static let phones = """
        import sys, json, time, paho.mqtt.client as mqtt
        port, path, devices = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
        c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="chaos-phones", clean_session=False)
        c.max_inflight_messages_set(1000)
        c.max_queued_messages_set(0)
        c.reconnect_delay_set(0.1, 1)
        acknowledged = set()
        c.on_publish = lambda client, userdata, mid, reason, properties: acknowledged.add(mid)
        c.connect("127.0.0.1", port); c.loop_start()
        fixes = json.load(open(path))
        start = time.time()
        sent = []
        for i in range(0, len(fixes), devices):
            time.sleep(max(0, start + i // devices - time.time()))
            for device, tst, lat in fixes[i:i + devices]:
                payload = json.dumps({"_type": "location", "lat": lat, "lon": 8.0, "tst": tst, "acc": 5, "tid": "p"})
                sent.append(c.publish("owntracks/" + device, payload, qos=1))
        # Published while the broker restarts, a message waits in paho and goes when it is back.
        mids = set(info.mid for info in sent)
        deadline = time.time() + 300
        while not mids <= acknowledged and time.time() < deadline:
            time.sleep(0.1)
        c.disconnect(); c.loop_stop()
        sys.exit(0 if mids <= acknowledged else 1)
        """

    /// serve started on `database`, once it is subscribed.
    static func subscribed(_ fencepost: FencepostProcess, config: String) async throws -> Served {
        let served = try await Served.start(fencepost, config: config)
        let output = served.output
        try await offThePool {
            let deadline = Date().addingTimeInterval(60)
            while Date() < deadline, !output.stderr().contains("MQTT connected") { usleep(20_000) }
        }
        return served
    }

    /// Runs one of the project's tools and returns its output, trimmed.
    static func tool(_ path: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        // Reaped here: Foundation's waitUntilExit was seen never to return for tools/mosquitto
        // (whose daemon outlives it).
        var status: Int32 = 0
        waitpid(process.processIdentifier, &status, 0)
        guard status == 0 else { throw FencepostProcess.Failure(description: "\(path) \(arguments) failed") }
        return text.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
