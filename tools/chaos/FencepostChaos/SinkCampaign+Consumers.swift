import FencepostTestSupport
import Foundation

/// The consumers: clients that are not ours (tools/python's redis-py, nats-py, paho-mqtt), each
/// printing one JSON array per message it got: `[event id, device]` (MQTT: `[time, id, device]`).
enum Consumers {
    /// Every entry of the stream, by XRANGE in pages, in the stream's order.
    static func redis(python: String, url: String) throws -> [SinkCampaign.Received] {
        try parse(
            KillCampaign.tool(
                python,
                [
                    "-c",
                    """
                    import sys, json, redis
                    r = redis.Redis.from_url(sys.argv[1])
                    start = "-"
                    while True:
                        entries = r.xrange(sys.argv[2], min=start, max="+", count=5000)
                        if not entries: break
                        for entry, fields in entries:
                            print(json.dumps([fields[b"id"].decode(), fields[b"device"].decode()]))
                        start = "(" + entries[-1][0].decode()
                    """, url, "chaos:events",
                ]))
    }

    /// Every message of the stream, through an ordered consumer, in the stream's order.
    static func nats(python: String, url: String) throws -> [SinkCampaign.Received] {
        try parse(
            KillCampaign.tool(
                python,
                [
                    "-c",
                    """
                    import sys, json, asyncio, nats
                    async def main():
                        nc = await nats.connect(sys.argv[1])
                        js = nc.jetstream()
                        total = (await js.stream_info(sys.argv[2])).state.messages
                        sub = await js.subscribe(sys.argv[3], ordered_consumer=True)
                        for _ in range(total):
                            msg = await sub.next_msg(timeout=30)
                            event = json.loads(msg.data)
                            key = (msg.headers or {}).get("Nats-Msg-Id", "")
                            if key.split(":")[1:2] != [event["id"]]:
                                sys.exit("Nats-Msg-Id %r is not the event's key (event:%s:...)" % (key, event["id"]))
                            print(json.dumps([event["id"], event["device"]]))
                        await nc.close()
                    asyncio.run(main())
                    """, url, "CHAOS", "chaos.events.*",
                ]))
    }

    static func parse(_ text: String) throws -> [SinkCampaign.Received] {
        try text.split(separator: "\n").map { line in
            guard let row = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [Any],
                let id = row[row.count - 2] as? String, let device = row.last as? String
            else { throw FencepostProcess.Failure(description: "a consumer printed \(line)") }
            return SinkCampaign.Received(id: id, device: device, at: row.count == 3 ? row[0] as? Double : nil)
        }
    }
}

/// A paho-mqtt subscriber to `chaos/events/#` at QoS 1 with a persistent session, running for
/// the whole campaign (it reconnects when the broker restarts); it appends each message to a
/// file with the time it came.
final class MQTTReader {
    let process = Process()
    let output: URL
    let stop: URL

    init(python: String, url: String, work: URL) throws {
        output = work.appendingPathComponent("mqtt-reader.jsonl")
        stop = work.appendingPathComponent("mqtt-reader.stop")
        for file in [output, stop] { try? FileManager.default.removeItem(at: file) }
        let ready = work.appendingPathComponent("mqtt-reader.ready")
        try? FileManager.default.removeItem(at: ready)
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [
            "-c", Self.script, String(url.split(separator: ":").last!), output.path, stop.path, ready.path,
        ]
        try process.run()
        let deadline = Date().addingTimeInterval(30)
        while !FileManager.default.fileExists(atPath: ready.path) {
            guard Date() < deadline, process.isRunning else {
                throw FencepostProcess.Failure(description: "the MQTT reader did not subscribe")
            }
            usleep(20_000)
        }
    }

    /// Asks the reader to stop once it has `count` distinct ids (or nothing came for 30 s).
    func finish(expecting count: Int) async throws -> [SinkCampaign.Received] {
        try Data("\(count)".utf8).write(to: stop, options: .atomic)
        let process = process
        try await offThePool { process.waitUntilExit() }
        return try Consumers.parse(String(contentsOf: output, encoding: .utf8))
    }

    func stopNow() {
        if process.isRunning { process.terminate() }
    }

    static let script = """
        import sys, os, json, time, paho.mqtt.client as mqtt
        port, out, stop, ready = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
        log = open(out, "a", buffering=1)
        seen = set(); last = [time.time()]
        def on_connect(c, u, flags, reason, properties):
            c.subscribe("chaos/events/#", qos=1)
        def on_subscribe(c, u, mid, reasons, properties):
            open(ready, "w").close()
        def on_message(c, u, m):
            event = json.loads(m.payload)
            seen.add(event["id"]); last[0] = time.time()
            log.write(json.dumps([time.time(), event["id"], event["device"]]) + "\\n")
        c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="chaos-sink-reader", clean_session=False)
        c.on_connect, c.on_subscribe, c.on_message = on_connect, on_subscribe, on_message
        c.reconnect_delay_set(0.1, 1)
        c.connect("127.0.0.1", port); c.loop_start()
        while True:
            time.sleep(0.1)
            if os.path.exists(stop):
                want = int(open(stop).read() or 0)
                if len(seen) >= want or time.time() - last[0] > 30: break
        c.disconnect(); c.loop_stop(); log.close()
        """
}
