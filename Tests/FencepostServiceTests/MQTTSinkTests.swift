import FencepostCore
import FencepostFormats
import FencepostService
import FencepostStore
import FencepostTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

/// The MQTT sink through a real mosquitto (tools/mosquitto), read with paho-mqtt.
@Suite(.enabled(if: TestBroker.available, "needs FENCEPOST_TEST_MQTT and FENCEPOST_TEST_PYTHON (tools/test)"))
struct MQTTSinkTests {
    /// Subscribes with paho-mqtt to `filters` and prints `[topic, payload, retained]` for each
    /// message until none came for a second. With `session`, a persistent session of that id
    /// (`subscribe-only` makes it and leaves at once).
    static func read(_ filters: [String], session: String? = nil, subscribeOnly: Bool = false) async throws
        -> [(topic: String, payload: String, retained: Bool)]
    {
        let arguments = [filters.joined(separator: " "), session ?? "", subscribeOnly ? "1" : "0"]
        let text = try await offThePool {
            try TestBroker.runPython(
                """
                import sys, json, time, paho.mqtt.client as mqtt
                host, port, filters, session, only = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(), sys.argv[4], sys.argv[5] == "1"
                got = []; last = [time.time()]
                def on_message(c, u, m):
                    got.append([m.topic, m.payload.decode(), bool(m.retain)]); last[0] = time.time()
                if session:
                    c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=session, clean_session=False)
                else:
                    c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2)
                c.on_message = on_message
                c.connect(host, port); c.loop_start()
                for f in filters: c.subscribe(f, qos=1)[1]
                time.sleep(0.5)
                if not only:
                    while time.time() - last[0] < 1.0: time.sleep(0.1)
                c.disconnect(); c.loop_stop()
                print(json.dumps(got))
                """, arguments: arguments)
        }
        guard let rows = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [[Any]] else { return [] }
        return rows.compactMap { row in
            guard row.count == 3, let topic = row[0] as? String, let payload = row[1] as? String,
                let retained = row[2] as? Bool
            else { return nil }
            return (topic, payload, retained)
        }
    }

    @Test(
        "events on PREFIX/events/DEVICE in order, retained state and Home Assistant discovery; a removed region's entity is removed"
    )
    func eventsStateAndDiscovery() async throws {
        let unique = UUID().uuidString.prefix(8).lowercased()
        let prefix = "fp-\(unique)"
        let device = "car-\(unique)"
        let session = "reader-\(unique)"
        let fixture = try await ServiceFixture()
        defer { fixture.cleanUp() }
        _ = try await fixture.store.applyRoster(DeviceRoster([.init(device: device, name: "Family car")]))
        let file = try TemporaryFile(
            #"{"sinks":[{"type":"mqtt","name":"ha","url":"\#(TestBroker.url!)","topic_prefix":"\#(prefix)","qos":1,"homeassistant_discovery":true}]}"#,
            suffix: ".json")
        defer { file.remove() }
        let configuration = try ServiceConfiguration.load(path: file.path)
        // The reader's session exists before the events are sent: the broker keeps them for it.
        _ = try await Self.read(["\(prefix)/events/#"], session: session, subscribeOnly: true)
        try await fixture.app(configuration).test(.router) { client in
            func post(_ fixes: [(time: Double, lat: Double, lon: Double)]) async throws {
                let response = try await client.execute(
                    uri: "/v1/devices/\(device)/locations", method: .post, headers: .bearer(fixture.admin),
                    body: ByteBuffer(string: ServiceFixture.batchBody(fixes)))
                #expect(response.status == .ok)
            }
            func caughtUp() async throws {
                try await WebhookTests.eventually {
                    let sink = try await client.execute(uri: "/v1/sinks", method: .get, headers: .bearer(fixture.admin))
                        .json?["sinks"]?.arrayValue?.first
                    return sink?["lag_rows"]?.numberValue == 0 && sink?["state"]?.stringValue == "idle"
                }
            }
            // Through home and out, then into home and staying.
            let walk = ServiceFixture.walk()
            try await post(walk)
            try await post(ServiceFixture.walk(start: 1_750_100_000).prefix(7).map { $0 })
            try await caughtUp()
            var events: [EventRow] = []
            try await fixture.store.forEachEvent(EventQuery(device: device)) { events.append($0) }
            #expect(events.map(\.kind) == ["enter", "exit", "enter"])
            let received = try await Self.read(["\(prefix)/events/#"], session: session)
            #expect(received.map(\.topic) == Array(repeating: "\(prefix)/events/\(device)", count: 3))
            #expect(
                received.compactMap { try? JSONParser.parse(Array($0.payload.utf8))["id"]?.stringValue }
                    == events.map(\.id))

            let retained = try await Self.read([
                "\(prefix)/#", "homeassistant/device_tracker/fencepost_car_\(unique)/config",
                "homeassistant/binary_sensor/fencepost_region_home/config",
            ])
            func payload(_ topic: String) -> String? { retained.last { $0.topic == topic && $0.retained }?.payload }
            let state = try #require(payload("\(prefix)/devices/\(device)/state"))
            #expect(state == #"{"device":"\#(device)","regions":[{"id":"home","name":"home"}]}"#)
            #expect(payload("\(prefix)/devices/\(device)/location") == "home")
            #expect(payload("\(prefix)/regions/home/presence") == "ON")
            let tracker = try JSONParser.parse(
                Array((payload("homeassistant/device_tracker/fencepost_car_\(unique)/config") ?? "").utf8))
            #expect(tracker["name"]?.stringValue == "Family car")
            #expect(tracker["state_topic"]?.stringValue == "\(prefix)/devices/\(device)/location")
            #expect(tracker["source_type"]?.stringValue == "gps")
            let sensor = try JSONParser.parse(
                Array((payload("homeassistant/binary_sensor/fencepost_region_home/config") ?? "").utf8))
            #expect(sensor["device_class"]?.stringValue == "presence")
            #expect(sensor["state_topic"]?.stringValue == "\(prefix)/regions/home/presence")

            // Home goes, work comes: the next event announces work and removes home's entity.
            try await fixture.store.applyRegions([
                try ServiceFixture.region(
                    id: "work", lat: ServiceFixture.home.lat, lon: ServiceFixture.home.lon + 0.1, radius: 100)
            ])
            try await post(
                ServiceFixture.walk(start: 1_750_200_000).map { ($0.time, $0.lat, $0.lon + 0.1) })
            try await caughtUp()
            let after = try await Self.read([
                "homeassistant/binary_sensor/fencepost_region_home/config",
                "homeassistant/binary_sensor/fencepost_region_work/config",
            ])
            #expect(!after.contains { $0.topic.hasSuffix("fencepost_region_home/config") })
            #expect(after.contains { $0.topic.hasSuffix("fencepost_region_work/config") && $0.retained })
        }
        // Leaves no retained discovery configs behind on the shared broker.
        _ = try await offThePool {
            try TestBroker.runPython(
                """
                import sys, paho.mqtt.client as mqtt
                c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2); c.connect(sys.argv[1], int(sys.argv[2])); c.loop_start()
                for t in sys.argv[3:]: c.publish(t, b"", qos=1, retain=True).wait_for_publish(5)
                c.disconnect(); c.loop_stop()
                """,
                arguments: [
                    "homeassistant/binary_sensor/fencepost_region_work/config",
                    "homeassistant/device_tracker/fencepost_car_\(unique)/config",
                ])
        }
    }
}
