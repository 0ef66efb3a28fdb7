import FencepostBrokers
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

/// The Redis Streams sink against a real redis-server (tools/redis), read back with redis-cli.
@Suite(.enabled(if: TestRedis.available, "needs FENCEPOST_TEST_REDIS (tools/test)"))
struct RedisSinkTests {
    /// The stream's entries as redis-cli gives them: (entry id, event id, device).
    static func entries(_ url: String, stream: String) async throws -> [(entry: String, id: String, device: String)] {
        let text = try await TestRedis.cli(url, ["--json", "XRANGE", stream, "-", "+"])
        let items = try #require(try JSONParser.parse(Array(text.utf8)).arrayValue)
        return try items.map { item in
            let pair = try #require(item.arrayValue)
            let entry = try #require(pair.first?.stringValue)
            let fields = try #require(pair.last?.arrayValue).compactMap(\.stringValue)
            var values: [String: String] = [:]
            for index in stride(from: 0, to: fields.count - 1, by: 2) { values[fields[index]] = fields[index + 1] }
            return (entry, values["id"] ?? "", values["device"] ?? "")
        }
    }

    static func configuration(url: String, stream: String, batchSize: Int) throws -> ServiceConfiguration {
        let file = try TemporaryFile(
            #"{"sinks":[{"type":"redis","name":"events","url":"\#(url)","stream":"\#(stream)","batch_size":\#(batchSize)}]}"#,
            suffix: ".json")
        defer { file.remove() }
        return try ServiceConfiguration.load(path: file.path)
    }

    @Test(
        "every event reaches the stream once, in outbox order, its entry id its outbox sequence, across a Redis restart mid-stream"
    )
    func acrossRestart() async throws {
        // A server of the test's own: restarting the shared one would disturb other tests.
        let server = "sink-\(UUID().uuidString.prefix(8))"
        let url = try await TestRedis.tool(["start", server])
        let fixture = try await ServiceFixture()
        defer { fixture.cleanUp() }
        let stream = "fencepost:test"
        let configuration = try Self.configuration(url: url, stream: stream, batchSize: 5)
        let devices = (0..<6).map { "d\($0)" }
        try await fixture.app(configuration).test(.router) { client in
            func post(round: Int) async throws {
                for device in devices {
                    let walk = ServiceFixture.walk(start: 1_750_000_000 + Double(round) * 3_600)
                    let response = try await client.execute(
                        uri: "/v1/devices/\(device)/locations", method: .post, headers: .bearer(fixture.admin),
                        body: ByteBuffer(string: ServiceFixture.batchBody(walk)))
                    #expect(response.status == .ok)
                }
            }
            try await post(round: 0)
            try await post(round: 1)
            // Redis goes away (for a second) while events are posted, and comes back.
            async let restarted = TestRedis.tool(["restart", server, "1"])
            try await WebhookTests.eventually { (try? await TestRedis.cli(url, ["PING"])) == nil }
            try await post(round: 2)
            try await post(round: 3)
            _ = try await restarted
            try await post(round: 4)
            let expected = devices.count * 5 * 2
            try await WebhookTests.eventually {
                (try? await TestRedis.cli(url, ["XLEN", stream]))?.trimmingCharacters(in: .whitespacesAndNewlines)
                    == String(expected)
            }
            // Redis holds every entry before the sink has recorded the last reply (its cursor
            // commits after XADD answers): wait for the sink's own word too.
            var answer: JSONValue?
            try await WebhookTests.eventually {
                answer = try await client.execute(uri: "/v1/sinks", method: .get, headers: .bearer(fixture.admin)).json
                let sink = answer?["sinks"]?.arrayValue?.first
                return sink?["lag_rows"]?.numberValue == 0 && sink?["state"]?.stringValue == "idle"
            }
            let sink = try #require(answer?["sinks"]?.arrayValue?.first)
            #expect(sink["name"]?.stringValue == "events")
            #expect(sink["type"]?.stringValue == "redis")
            #expect(sink["lag_rows"]?.numberValue == 0)
            #expect(sink["dead_letters"]?.numberValue == 0)
            // The events posted while it was away failed at first.
            #expect((sink["failures"]?.numberValue ?? 0) >= 1)
            #expect((sink["delivered"]?.numberValue ?? 0) >= Double(expected))
            let metrics = try await client.execute(uri: "/metrics", method: .get).text
            #expect(OperationsTests.sample(metrics, #"fencepost_sink_lag_rows{sink="events",type="redis"}"#) == 0)
            #expect(
                (OperationsTests.sample(metrics, #"fencepost_sink_deliveries_total{sink="events",type="redis"}"#) ?? 0)
                    >= Double(expected))
        }
        let entries = try await Self.entries(url, stream: stream)
        let feed = try await fixture.store.eventFeed(after: 0, device: nil, limit: 10_000)
        try await TestRedis.tool(["stop", server])
        #expect(feed.count == devices.count * 5 * 2)
        // Each event once, in outbox order (so in each device's order), under its sequence.
        #expect(entries.map(\.id) == feed.map(\.event.id))
        #expect(entries.map(\.entry) == feed.map { "\($0.seq)-0" })
        #expect(Set(entries.map(\.id)).count == entries.count)
        for device in devices {
            #expect(
                entries.filter { $0.device == device }.map(\.id)
                    == feed.filter { $0.event.device == device }.map(\.event.id))
        }
    }

    @Test(
        "a batch sent again is refused by Redis as a repeat and counts as delivered; the stream holds each event once")
    func repeatsRefusedByRedis() async throws {
        let url = try #require(TestRedis.url)
        let fixture = try await ServiceFixture()
        defer { fixture.cleanUp() }
        try await fixture.app().test(.router) { client in
            for round in 0..<4 {
                let walk = ServiceFixture.walk(start: 1_750_000_000 + Double(round) * 3_600)
                _ = try await client.execute(
                    uri: "/v1/devices/phone/locations", method: .post, headers: .bearer(fixture.phone),
                    body: ByteBuffer(string: ServiceFixture.batchBody(walk)))
            }
        }
        let feed = try await fixture.store.eventFeed(after: 0, device: nil, limit: 100)
        #expect(feed.count == 8)
        let stream = "fencepost:repeat:\(UUID().uuidString)"
        let endpoint = try BrokerEndpoint.parse(url, scheme: "redis", defaultPort: 6379).get()
        let sink = RedisStreamSink(
            name: "repeat", endpoint: endpoint, stream: stream, batchSize: 100, maxAttempts: 3, timeout: .seconds(10))
        let first = await sink.deliver(Array(feed[0..<5]), attempt: 1)
        #expect(first.confirmed == 5 && first.failure == nil)
        // A crash before the cursor moved: the same events again, and the next ones.
        let again = await sink.deliver(Array(feed[2..<8]), attempt: 1)
        #expect(again.confirmed == 6)
        #expect(again.failure == nil)
        await sink.shutdown()
        let entries = try await Self.entries(url, stream: stream)
        #expect(entries.map(\.id) == feed.map(\.event.id))
        _ = try await TestRedis.cli(url, ["DEL", stream])
    }

    @Test("a key that is not a stream: the events are refused, retried, then dead-lettered; /v1/sinks says why")
    func refusedEventsDeadLettered() async throws {
        let url = try #require(TestRedis.url)
        let key = "fencepost:not-a-stream:\(UUID().uuidString)"
        _ = try await TestRedis.cli(url, ["SET", key, "x"])
        let fixture = try await ServiceFixture()
        defer { fixture.cleanUp() }
        let file = try TemporaryFile(
            #"{"sinks":[{"type":"redis","name":"wrong","url":"\#(url)","stream":"\#(key)","max_attempts":1}]}"#,
            suffix: ".json")
        defer { file.remove() }
        try await fixture.app(try ServiceConfiguration.load(path: file.path)).test(.router) { client in
            _ = try await client.execute(
                uri: "/v1/devices/phone/locations", method: .post, headers: .bearer(fixture.phone),
                body: ByteBuffer(string: ServiceFixture.batchBody(ServiceFixture.walk())))
            try await WebhookTests.eventually { try await fixture.store.deadLetterCount("sink:wrong") == 2 }
            let sink = try #require(
                try await client.execute(uri: "/v1/sinks", method: .get, headers: .bearer(fixture.admin)).json?[
                    "sinks"]?.arrayValue?.first)
            #expect(sink["dead_letters"]?.numberValue == 2)
            #expect(sink["lag_rows"]?.numberValue == 0)
            #expect(sink["last_error"]?.stringValue?.contains("WRONGTYPE") == true)
        }
        _ = try await TestRedis.cli(url, ["DEL", key])
    }
}
