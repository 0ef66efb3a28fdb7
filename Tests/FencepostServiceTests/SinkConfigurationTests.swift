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

/// `"sinks"` in `serve --config`: what is refused, and a sink whose broker is away.
struct SinkConfigurationTests {
    static func load(_ json: String) throws -> ServiceConfiguration {
        let file = try TemporaryFile(json, suffix: ".json")
        defer { file.remove() }
        return try ServiceConfiguration.load(path: file.path)
    }

    @Test(
        "a bad sink is refused naming the sink and the field",
        arguments: [
            (
                #"{"sinks":[{"type":"redis","name":"ev","url":"http://x"}]}"#,
                #"sinks[0].url: sink "ev" (redis): not a redis:// URL"#
            ),
            (#"{"sinks":[{"type":"redis","url":"redis://h:99999"}]}"#, #"sinks[0].url: sink "redis" (redis): "#),
            (
                #"{"sinks":[{"type":"redis","name":"ev","url":"redis://h","stream":""}]}"#,
                #"sinks[0].stream: sink "ev" (redis): must not be empty"#
            ),
            (#"{"sinks":[{"type":"kafka","url":"x"}]}"#, #"sinks[0].type: unknown sink type "kafka""#),
            (
                #"{"sinks":[{"type":"redis","url":"redis://h","strem":"s"}]}"#,
                #"sinks[0].strem: unknown key; did you mean "stream"?"#
            ),
            (#"{"sinks":[{"type":"redis","name":"a b","url":"redis://h"}]}"#, #"sinks[0].name: a sink name is"#),
            (
                #"{"sinks":[{"type":"redis","url":"redis://h"},{"type":"redis","url":"redis://g"}]}"#,
                #"two sinks are named "redis""#
            ),
            (#"{"sinks":[{"url":"redis://h"}]}"#, #"sinks[0].type: missing"#),
            (
                #"{"sinks":[{"type":"nats","name":"bus","url":"redis://h"}]}"#,
                #"sinks[0].url: sink "bus" (nats): not a nats:// URL"#
            ),
            (
                #"{"sinks":[{"type":"nats","url":"nats://h","subject":"a.*.{device}"}]}"#,
                #"sinks[0].subject: sink "nats" (nats): is not a NATS subject"#
            ),
            (
                #"{"sinks":[{"type":"nats","url":"nats://h","subject":"a..b"}]}"#,
                #"sinks[0].subject: sink "nats" (nats): is not a NATS subject: has an empty token"#
            ),
            (
                #"{"sinks":[{"type":"mqtt","name":"ha","url":"mqtt://h","qos":0}]}"#,
                #"sinks[0].qos: sink "ha" (mqtt): must be 1"#
            ),
            (
                #"{"sinks":[{"type":"mqtt","url":"mqtt://h","topic_prefix":"fp/#"}]}"#,
                #"sinks[0].topic_prefix: sink "mqtt" (mqtt): must be a topic without wildcards"#
            ),
            (
                #"{"sinks":[{"type":"mqtt","url":"http://h"}]}"#,
                #"sinks[0].url: sink "mqtt" (mqtt): not an mqtt:// or mqtts:// URL"#
            ),
            (
                #"{"sinks":[{"type":"nats","url":"nats://h","stream":"A.B"}]}"#,
                #"sinks[0].stream: sink "nats" (nats): a JetStream stream name"#
            ),
        ])
    func refused(json: String, message: String) throws {
        do {
            _ = try Self.load(json)
            Issue.record("accepted: \(json)")
        } catch {
            #expect("\(error)".contains(message), "\(error)")
        }
    }

    @Test("a sink's defaults: the name is the type; Redis' stream fencepost:events; NATS' subject and stream")
    func defaults() throws {
        let configuration = try Self.load(
            #"{"sinks":[{"type":"redis","url":"redis://127.0.0.1:6390/2"},{"type":"nats","url":"nats://127.0.0.1"}]}"#)
        #expect(
            configuration.sinks == [
                .init(name: "redis", target: .redis(url: "redis://127.0.0.1:6390/2", stream: "fencepost:events")),
                .init(
                    name: "nats",
                    target: .nats(url: "nats://127.0.0.1", subject: "fencepost.events.{device}", stream: "FENCEPOST")),
            ])
    }

    @Test("a sink whose broker is unreachable keeps its events: retrying, lag counted, nothing dead-lettered")
    func unreachableBroker() async throws {
        // A privileged port nothing on a test machine listens on (tcpmux): connections are refused.
        let free = 1
        let fixture = try await ServiceFixture()
        defer { fixture.cleanUp() }
        let configuration = try Self.load(
            #"{"sinks":[{"type":"redis","name":"away","url":"redis://127.0.0.1:\#(free)","max_attempts":1}]}"#)
        try await fixture.app(configuration).test(.router) { client in
            _ = try await client.execute(
                uri: "/v1/devices/phone/locations", method: .post, headers: .bearer(fixture.phone),
                body: ByteBuffer(string: ServiceFixture.batchBody(ServiceFixture.walk())))
            var sink: JSONValue?
            try await WebhookTests.eventually {
                sink = try await client.execute(uri: "/v1/sinks", method: .get, headers: .bearer(fixture.admin)).json?[
                    "sinks"]?.arrayValue?.first
                // Between attempts it says `retrying`; during one, `delivering`: wait for the former.
                return (sink?["failures"]?.numberValue ?? 0) >= 2 && sink?["lag_rows"]?.numberValue == 2
                    && sink?["state"]?.stringValue == "retrying"
            }
            #expect(sink?["state"]?.stringValue == "retrying")
            #expect(sink?["lag_rows"]?.numberValue == 2)
            #expect(sink?["dead_letters"]?.numberValue == 0)
            #expect(sink?["last_error"]?.stringValue?.contains("Redis at 127.0.0.1:\(free)") == true)
            let readOnly = try await client.execute(uri: "/v1/sinks", method: .get, headers: .bearer(fixture.reader))
            #expect(readOnly.status == .forbidden)
            let metrics = try await client.execute(uri: "/metrics", method: .get).text
            #expect(OperationsTests.sample(metrics, #"fencepost_sink_lag_rows{sink="away",type="redis"}"#) == 2)
            #expect(
                (OperationsTests.sample(metrics, #"fencepost_sink_failures_total{sink="away",type="redis"}"#) ?? 0) >= 2
            )
        }
        #expect(try await fixture.store.deadLetterCount("sink:away") == 0)
    }
}
