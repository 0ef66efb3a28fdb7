import FencepostCore
import FencepostService
import FencepostStore
import FencepostTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

/// OwnTracks over MQTT through a real mosquitto, with paho-mqtt publishing as the phone does
/// (payloads as OwnTracks documents them: the JSON of its booklet's `_type`s) and PyNaCl
/// encrypting as the apps do.
@Suite(.enabled(if: TestBroker.available, "needs FENCEPOST_TEST_MQTT and FENCEPOST_TEST_PYTHON (tools/test)"))
struct MQTTIngestTests {
    /// Publishes `[topic, payload, key or null]` items with QoS 1, in order; a key encrypts the
    /// payload with secretbox (the key's bytes zero-padded to 32, the nonce first, base64).
    static func publish(_ messages: [(topic: String, payload: String, key: String?)]) async throws {
        let items = messages.map { message -> JSONValue in
            .array([.string(message.topic), .string(message.payload), message.key.map(JSONValue.string) ?? .null])
        }
        let argument = try JSONValueEncoder.canonicalText(JSONValue.array(items))
        _ = try await offThePool {
            try TestBroker.runPython(
                """
                import sys, json, base64, paho.mqtt.client as mqtt, nacl.secret, nacl.utils
                c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2)
                c.connect(sys.argv[1], int(sys.argv[2])); c.loop_start()
                for topic, payload, key in json.loads(sys.argv[3]):
                    if key is not None:
                        box = nacl.secret.SecretBox(key.encode().ljust(32, b"\\0")[:32])
                        sealed = box.encrypt(payload.encode())  # the nonce, then the ciphertext
                        payload = json.dumps({"_type": "encrypted", "data": base64.b64encode(bytes(sealed)).decode()})
                    c.publish(topic, payload, qos=1).wait_for_publish(10)
                c.disconnect(); c.loop_stop()
                """, arguments: [argument])
        }
    }

    static func location(_ fix: (time: Double, lat: Double, lon: Double)) -> String {
        #"{"_type":"location","lat":\#(fix.lat),"lon":\#(fix.lon),"tst":\#(Int(fix.time)),"acc":5,"tid":"ph"}"#
    }

    static func configuration(base: String, keys: [String: String] = [:]) throws -> ServiceConfiguration {
        let keyText = keys.map { #""\#($0.key)":"\#($0.value)""# }.joined(separator: ",")
        let file = try TemporaryFile(
            #"{"mqtt":{"url":"\#(TestBroker.url!)","client_id":"fencepost-\#(base)","topics":["\#(base)/+/+","\#(base)/+/+/event"],"keys":{\#(keyText)}}}"#,
            suffix: ".json")
        defer { file.remove() }
        return try ServiceConfiguration.load(path: file.path)
    }

    static func events(_ store: Store, device: String) async throws -> [String] {
        var events: [String] = []
        try await store.forEachEvent(EventQuery(device: device)) {
            events.append("\($0.id) \($0.kind) \($0.region ?? "-") \($0.time)")
        }
        return events
    }

    @Test(
        "locations over MQTT make the events the same fixes make posted as a batch; other types are counted, malformed ones refused"
    )
    func sameEventsAsABatch() async throws {
        let base = "ot-\(UUID().uuidString.prefix(8))"
        let walk = ServiceFixture.walk()
        // The reference: the same fixes as one batch over HTTP.
        let reference = try await ServiceFixture()
        defer { reference.cleanUp() }
        try await reference.app().test(.router) { client in
            let response = try await client.execute(
                uri: "/v1/devices/alice%2Fphone/locations", method: .post, headers: .bearer(reference.admin),
                body: ByteBuffer(string: ServiceFixture.batchBody(walk)))
            #expect(response.status == .ok, "\(response.text)")
        }
        let expected = try await Self.events(reference.store, device: "alice/phone")
        #expect(expected.count == 2)

        let fixture = try await ServiceFixture()
        defer { fixture.cleanUp() }
        let configuration = try Self.configuration(base: base, keys: ["bob": "s3cret"])
        try await fixture.app(configuration).test(.router) { client in
            var metrics = ""
            try await WebhookTests.eventually {
                metrics = try await client.execute(uri: "/metrics", method: .get).text
                return OperationsTests.sample(metrics, "fencepost_mqtt_connected") == 1
            }
            #expect(OperationsTests.sample(metrics, "fencepost_mqtt_connected") == 1)
            var messages = walk.map { (topic: "\(base)/alice/phone", payload: Self.location($0), key: String?.none) }
            messages += [
                (
                    "\(base)/alice/phone/event",
                    #"{"_type":"transition","event":"enter","desc":"home","tst":1750000100,"lat":47,"lon":8,"acc":5,"tid":"ph","wtst":1,"t":"c"}"#,
                    nil
                ),
                ("\(base)/alice/phone", #"{"_type":"lwt","tst":1750000000}"#, nil),
                ("\(base)/alice/phone", "not json", nil),
                ("\(base)/alice/phone", #"{"_type":"location","lat":91,"lon":8,"tst":1750000000}"#, nil),
                // Encrypted: bob's with his key, and one with a key that is not his.
                ("\(base)/bob/tab", Self.location(walk[0]), "s3cret"),
                ("\(base)/bob/tab", Self.location(walk[1]), "wrong key"),
            ]
            try await Self.publish(messages)
            try await WebhookTests.eventually {
                metrics = try await client.execute(uri: "/metrics", method: .get).text
                return OperationsTests.sample(
                    metrics, #"fencepost_protocol_messages_refused_total{protocol="owntracks_mqtt"}"#) == 3
                    && OperationsTests.sample(
                        metrics, #"fencepost_protocol_messages_total{protocol="owntracks_mqtt",type="location"}"#) == 14
            }
            #expect(
                OperationsTests.sample(
                    metrics, #"fencepost_protocol_messages_total{protocol="owntracks_mqtt",type="location"}"#) == 14)
            #expect(
                OperationsTests.sample(
                    metrics, #"fencepost_protocol_messages_total{protocol="owntracks_mqtt",type="transition"}"#) == 1)
            #expect(
                OperationsTests.sample(
                    metrics, #"fencepost_protocol_messages_total{protocol="owntracks_mqtt",type="lwt"}"#) == 1)
            #expect(
                OperationsTests.sample(
                    metrics, #"fencepost_protocol_messages_refused_total{protocol="owntracks_mqtt"}"#) == 3)
            // The transition the phone saw itself is an event too, flagged `device` (before the
            // fixes' enter in time, so first).
            let reported = DeterministicID.deviceEvent(
                device: "alice/phone", region: "home", kind: .enter, time: 1_750_000_100)
            let withReport = ["\(reported) enter home \(Timestamp.format(seconds: 1_750_000_100))"] + expected
            try await WebhookTests.eventually { try await Self.events(fixture.store, device: "alice/phone").count == 3 }
            #expect(try await Self.events(fixture.store, device: "alice/phone") == withReport)
            #expect(try await fixture.store.deviceAnchors()["bob/tab"] == Int64(walk[0].time * 1000))

            // The same locations again (as after a redelivery): dropped, no second event.
            try await Self.publish(
                walk.map { (topic: "\(base)/alice/phone", payload: Self.location($0), key: String?.none) })
            try await WebhookTests.eventually {
                metrics = try await client.execute(uri: "/metrics", method: .get).text
                return OperationsTests.sample(
                    metrics, #"fencepost_protocol_messages_total{protocol="owntracks_mqtt",type="location"}"#) == 27
            }
            #expect(try await Self.events(fixture.store, device: "alice/phone") == withReport)
        }
    }

    @Test(
        "transitions over MQTT without fixes make a device-only visit; one for an unknown waypoint is refused and acknowledged"
    )
    func transitionsOverMQTT() async throws {
        let base = "tr-\(UUID().uuidString.prefix(8))"
        let fixture = try await ServiceFixture()
        defer { fixture.cleanUp() }
        try await fixture.app(try Self.configuration(base: base)).test(.router) { client in
            try await WebhookTests.eventually {
                let metrics = try await client.execute(uri: "/metrics", method: .get).text
                return OperationsTests.sample(metrics, "fencepost_mqtt_connected") == 1
            }
            try await Self.publish([
                (
                    "\(base)/carol/phone/event",
                    #"{"_type":"transition","event":"enter","rid":"home","desc":"home","tst":1750000000,"wtst":1,"acc":40,"t":"c"}"#,
                    nil
                ),
                (
                    "\(base)/carol/phone/event",
                    #"{"_type":"transition","event":"leave","rid":"nowhere","desc":"Nowhere","tst":1750000100,"wtst":2,"t":"c"}"#,
                    nil
                ),
                (
                    "\(base)/carol/phone/event",
                    #"{"_type":"transition","event":"leave","rid":"home","tst":1750000600,"wtst":1,"acc":40,"t":"c"}"#,
                    nil
                ),
            ])
            var metrics = ""
            try await WebhookTests.eventually {
                metrics = try await client.execute(uri: "/metrics", method: .get).text
                return OperationsTests.sample(
                    metrics, #"fencepost_protocol_messages_total{protocol="owntracks_mqtt",type="transition"}"#) == 3
            }
            #expect(
                OperationsTests.sample(
                    metrics, #"fencepost_protocol_messages_refused_total{protocol="owntracks_mqtt"}"#)
                    == 1)
            var visits: [String] = []
            try await fixture.store.forEachVisit(device: "carol/phone") {
                visits.append("\($0.enteredAt)–\($0.exitedAt ?? "open") \($0.exitReason ?? "")")
            }
            #expect(visits == ["2025-06-15T15:06:40.000Z–2025-06-15T15:16:40.000Z exit"])
        }
    }

    @Test("a location over MQTT gets the device's monitored set as setWaypoints on its cmd topic, once")
    func setWaypointsOnTheCmdTopic() async throws {
        let base = "wp-\(UUID().uuidString.prefix(8))"
        let fixture = try await ServiceFixture()
        defer { fixture.cleanUp() }
        try await MonitoredSetAPITests.withRow(fixture)
        let configuration = try Self.configuration(base: base)
        try await fixture.app(configuration).test(.router) { client in
            try await WebhookTests.eventually {
                let metrics = try await client.execute(uri: "/metrics", method: .get).text
                return OperationsTests.sample(metrics, "fencepost_mqtt_connected") == 1
            }
            let first = Self.location((1_750_000_000, 47.0, 8.0))
            let again = Self.location((1_750_000_060, 47.0, 8.0))
            // paho, as the phone: listens on its cmd topic, posts a location, then another
            // from the same place; prints every command it was sent.
            let output = try await offThePool {
                try TestBroker.runPython(
                    """
                    import sys, time, paho.mqtt.client as mqtt
                    got = []
                    c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2)
                    c.on_message = lambda client, data, message: got.append(message.payload.decode())
                    c.connect(sys.argv[1], int(sys.argv[2])); c.loop_start()
                    c.subscribe(sys.argv[3] + "/alice/phone/cmd", qos=1); time.sleep(0.5)
                    c.publish(sys.argv[3] + "/alice/phone", sys.argv[4], qos=1).wait_for_publish(10)
                    deadline = time.time() + 15
                    while not got and time.time() < deadline: time.sleep(0.05)
                    c.publish(sys.argv[3] + "/alice/phone", sys.argv[5], qos=1).wait_for_publish(10)
                    time.sleep(2)
                    c.disconnect(); c.loop_stop()
                    print("\\n".join(got))
                    """, arguments: [base, first, again])
            }
            let commands = output.split(separator: "\n").compactMap { try? JSONParser.parse(Array($0.utf8)) }
            #expect(commands.count == 1, "one command, not one per location: \(output)")
            let command = try #require(commands.first)
            #expect(command["_type"]?.stringValue == "cmd" && command["action"]?.stringValue == "setWaypoints")
            let waypoints = command["waypoints"]?["waypoints"]?.arrayValue ?? []
            #expect(waypoints.count == 20)
            #expect(waypoints.contains { $0["rid"]?.stringValue == "home" })
        }
    }

    @Test("POST /owntracks opens encrypted payloads with the same keys; a wrong key is a 400 that writes nothing")
    func encryptedOverHTTP() async throws {
        let fixture = try await ServiceFixture()
        defer { fixture.cleanUp() }
        func sealed(_ key: String) async throws -> String {
            try await offThePool {
                try TestBroker.runPython(
                    """
                    import sys, base64, json, nacl.secret
                    box = nacl.secret.SecretBox(sys.argv[3].encode().ljust(32, b"\\0")[:32])
                    sealed = box.encrypt(sys.argv[4].encode())
                    print(json.dumps({"_type": "encrypted", "data": base64.b64encode(bytes(sealed)).decode()}))
                    """, arguments: [key, Self.location(ServiceFixture.walk()[0])])
            }
        }
        var configuration = ServiceConfiguration()
        configuration.mqtt = .init(url: "mqtt://127.0.0.1:1", keys: ["alice": "s3cret"])
        let good = try await sealed("s3cret")
        let bad = try await sealed("other")
        try await fixture.app(configuration).test(.router) { client in
            var headers = HTTPFields.bearer(fixture.admin)
            headers[HTTPField.Name("X-Limit-U")!] = "alice"
            headers[HTTPField.Name("X-Limit-D")!] = "phone"
            let refused = try await client.execute(
                uri: "/owntracks", method: .post, headers: headers, body: ByteBuffer(string: bad))
            #expect(refused.status == .badRequest)
            #expect(try await fixture.store.deviceAnchors()["alice/phone"] == nil)
            let taken = try await client.execute(
                uri: "/owntracks", method: .post, headers: headers, body: ByteBuffer(string: good))
            #expect(taken.status == .ok)
        }
        #expect(try await fixture.store.deviceAnchors()["alice/phone"] == Int64(ServiceFixture.walk()[0].time * 1000))
    }
}
