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

/// Home Assistant entities of regions removed while serve was down: the next run's MQTT sink
/// reads its retained discovery configs back from a real mosquitto and removes the gone ones.
@Suite(.enabled(if: TestBroker.available, "needs FENCEPOST_TEST_MQTT and FENCEPOST_TEST_PYTHON (tools/test)"))
struct MQTTSinkSweepTests {
    @Test("a region removed while serve was down loses its entity at the next start; others' configs stay")
    func regionRemovedWhileDown() async throws {
        let unique = UUID().uuidString.prefix(8).lowercased()
        let prefix = "sweep-\(unique)"
        let device = "car-\(unique)"
        let (home, work) = ("home-\(unique)", "work-\(unique)")
        let config = { (region: String) in
            "homeassistant/binary_sensor/fencepost_region_\(region.replacingOccurrences(of: "-", with: "_"))/config"
        }
        // Another sink's entity (another prefix) of a region this store does not have either.
        let foreign = config("cellar-\(unique)")
        _ = try await offThePool {
            try TestBroker.runPython(
                """
                import sys, paho.mqtt.client as mqtt
                c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2); c.connect(sys.argv[1], int(sys.argv[2])); c.loop_start()
                c.publish(sys.argv[3], sys.argv[4], qos=1, retain=True).wait_for_publish(5)
                c.disconnect(); c.loop_stop()
                """, arguments: [foreign, #"{"name":"Cellar","state_topic":"elsewhere/regions/cellar/presence"}"#])
        }
        let fixture = try await ServiceFixture()
        defer { fixture.cleanUp() }
        let file = try TemporaryFile(
            #"{"sinks":[{"type":"mqtt","name":"ha","url":"\#(TestBroker.url!)","topic_prefix":"\#(prefix)","qos":1,"homeassistant_discovery":true,"client_id":"\#(prefix)"}]}"#,
            suffix: ".json")
        defer { file.remove() }
        let configuration = try ServiceConfiguration.load(path: file.path)

        func run(walkingAt lon: Double, start: Double) async throws {
            try await fixture.app(configuration).test(.router) { client in
                let response = try await client.execute(
                    uri: "/v1/devices/\(device)/locations", method: .post, headers: .bearer(fixture.admin),
                    body: ByteBuffer(
                        string: ServiceFixture.batchBody(
                            ServiceFixture.walk(start: start).map { ($0.time, $0.lat, lon) })))
                #expect(response.status == .ok)
                try await WebhookTests.eventually {
                    let sink = try await client.execute(uri: "/v1/sinks", method: .get, headers: .bearer(fixture.admin))
                        .json?["sinks"]?.arrayValue?.first
                    return sink?["lag_rows"]?.numberValue == 0 && sink?["state"]?.stringValue == "idle"
                }
            }
        }
        let (lat, lon) = ServiceFixture.home
        try await fixture.store.applyRegions([
            try ServiceFixture.region(id: home, lat: lat, lon: lon, radius: 100),
            try ServiceFixture.region(id: work, lat: lat, lon: lon + 0.1, radius: 100),
        ])
        try await run(walkingAt: lon, start: 1_750_000_000)
        let before = try await MQTTSinkTests.read([config(home), config(work), foreign])
        #expect(Set(before.filter(\.retained).map(\.topic)) == [config(home), config(work), foreign])

        // serve is down; home is removed; serve comes back and delivers an event at work.
        try await fixture.store.applyRegions([
            try ServiceFixture.region(id: work, lat: lat, lon: lon + 0.1, radius: 100)
        ])
        try await run(walkingAt: lon + 0.1, start: 1_750_100_000)
        let after = try await MQTTSinkTests.read([config(home), config(work), foreign])
        #expect(Set(after.filter(\.retained).map(\.topic)) == [config(work), foreign], "\(after.map(\.topic))")

        let leftovers = [config(work), foreign, "homeassistant/device_tracker/fencepost_car_\(unique)/config"]
        _ = try await offThePool {
            try TestBroker.runPython(
                """
                import sys, paho.mqtt.client as mqtt
                c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2); c.connect(sys.argv[1], int(sys.argv[2])); c.loop_start()
                for t in sys.argv[3:]: c.publish(t, b"", qos=1, retain=True).wait_for_publish(5)
                c.disconnect(); c.loop_stop()
                """, arguments: leftovers)
        }
    }

    @Test("an erased device loses its device_tracker and retained state at the sink's next delivery")
    func erasedDeviceIsSwept() async throws {
        let unique = UUID().uuidString.prefix(8).lowercased()
        let prefix = "erase-\(unique)"
        let (gone, kept) = ("van-\(unique)", "car-\(unique)")
        let tracker: @Sendable (String) -> String = { device in
            "homeassistant/device_tracker/fencepost_\(device.replacingOccurrences(of: "-", with: "_"))/config"
        }
        let fixture = try await ServiceFixture()
        defer { fixture.cleanUp() }
        let file = try TemporaryFile(
            #"{"sinks":[{"type":"mqtt","name":"ha","url":"\#(TestBroker.url!)","topic_prefix":"\#(prefix)","qos":1,"homeassistant_discovery":true,"client_id":"\#(prefix)"}]}"#,
            suffix: ".json")
        defer { file.remove() }
        let configuration = try ServiceConfiguration.load(path: file.path)
        let (lat, lon) = ServiceFixture.home
        try await fixture.store.applyRegions([
            try ServiceFixture.region(id: "home-\(unique)", lat: lat, lon: lon, radius: 100)
        ])
        let topics = [
            tracker(gone), tracker(kept), "\(prefix)/devices/\(gone)/state", "\(prefix)/devices/\(kept)/state",
        ]
        try await fixture.app(configuration).test(.router) { client in
            func post(_ device: String, start: Double) async throws {
                let response = try await client.execute(
                    uri: "/v1/devices/\(device)/locations", method: .post, headers: .bearer(fixture.admin),
                    body: ByteBuffer(string: ServiceFixture.batchBody(ServiceFixture.walk(start: start))))
                #expect(response.status == .ok)
                try await WebhookTests.eventually {
                    let sink = try await client.execute(uri: "/v1/sinks", method: .get, headers: .bearer(fixture.admin))
                        .json?["sinks"]?.arrayValue?.first
                    return sink?["lag_rows"]?.numberValue == 0 && sink?["state"]?.stringValue == "idle"
                }
            }
            try await post(gone, start: 1_750_000_000)
            try await post(kept, start: 1_750_000_000)
            let before = try await MQTTSinkTests.read(topics)
            #expect(Set(before.filter(\.retained).map(\.topic)) == Set(topics))

            let erased = try await client.execute(
                uri: "/v1/devices/\(gone)?erase=true", method: .delete, headers: .bearer(fixture.admin))
            #expect(erased.status == .ok)
            try await post(kept, start: 1_750_100_000)
            let after = try await MQTTSinkTests.read(topics)
            #expect(
                Set(after.filter(\.retained).map(\.topic)) == [tracker(kept), "\(prefix)/devices/\(kept)/state"],
                "\(after.map(\.topic))")
        }
        _ = try await offThePool {
            try TestBroker.runPython(
                """
                import sys, paho.mqtt.client as mqtt
                c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2); c.connect(sys.argv[1], int(sys.argv[2])); c.loop_start()
                for t in sys.argv[3:]: c.publish(t, b"", qos=1, retain=True).wait_for_publish(5)
                c.disconnect(); c.loop_stop()
                """,
                arguments: topics + [
                    "\(prefix)/devices/\(kept)/location",
                    "homeassistant/binary_sensor/fencepost_region_home_\(unique)/config",
                ])
        }
    }
}
