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

/// The NATS JetStream sink against a real nats-server -js (tools/nats), read back with nats-py.
@Suite(.enabled(if: TestNATS.available, "needs FENCEPOST_TEST_NATS and FENCEPOST_TEST_PYTHON (tools/test)"))
struct NATSSinkTests {
    static func configuration(url: String, prefix: String, stream: String) throws -> ServiceConfiguration {
        let file = try TemporaryFile(
            #"{"sinks":[{"type":"nats","name":"bus","url":"\#(url)","subject":"\#(prefix).{device}","stream":"\#(stream)","batch_size":5}]}"#,
            suffix: ".json")
        defer { file.remove() }
        return try ServiceConfiguration.load(path: file.path)
    }

    @Test(
        "every event is stored once in the stream it creates, on its device's subject, with its idempotency key, across a server restart mid-stream"
    )
    func acrossRestart() async throws {
        // A server of the test's own: restarting the shared one would disturb other tests.
        let server = "sink-\(UUID().uuidString.prefix(8))"
        let url = try await TestNATS.tool(["start", server])
        let fixture = try await ServiceFixture()
        defer { fixture.cleanUp() }
        let stream = "FP_RESTART"
        let configuration = try Self.configuration(url: url, prefix: "fp.restart", stream: stream)
        let devices = (0..<6).map { "d\($0)" }
        let expected = devices.count * 5 * 2
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
            // The server goes away (for a second) while events are posted, and comes back.
            async let restarted = TestNATS.tool(["restart", server, "1"])
            try await WebhookTests.eventually { await !TestNATS.listening(url) }
            try await post(round: 2)
            try await post(round: 3)
            _ = try await restarted
            try await post(round: 4)
            var sink: JSONValue?
            try await WebhookTests.eventually {
                sink = try await client.execute(uri: "/v1/sinks", method: .get, headers: .bearer(fixture.admin)).json?[
                    "sinks"]?.arrayValue?.first
                // The count of confirmed deliveries too: an ack read late (a retry after the
                // restart) is counted when its batch's report comes back.
                return sink?["lag_rows"]?.numberValue == 0 && sink?["state"]?.stringValue == "idle"
                    && (sink?["delivered"]?.numberValue ?? 0) >= Double(expected)
            }
            #expect(sink?["type"]?.stringValue == "nats")
            #expect(sink?["lag_rows"]?.numberValue == 0)
            #expect(sink?["dead_letters"]?.numberValue == 0)
            #expect((sink?["failures"]?.numberValue ?? 0) >= 1)
            #expect((sink?["delivered"]?.numberValue ?? 0) >= Double(expected), "\(String(describing: sink))")
        }
        let messages = try await TestNATS.messages(url, stream: stream)
        let feed = try await fixture.store.eventFeed(after: 0, device: nil, limit: 10_000)
        try await TestNATS.tool(["stop", server])
        #expect(feed.count == expected)
        // Each event once, under its outbox row's key, on its device's subject, in each device's order.
        #expect(messages.count == expected)
        #expect(Set(messages.map(\.eventID)) == Set(feed.map(\.event.id)))
        #expect(Set(messages.map(\.messageID)).count == messages.count)
        let keys = Dictionary(uniqueKeysWithValues: feed.map { ($0.event.id, $0.idempotencyKey) })
        for message in messages {
            #expect(message.messageID == keys[message.eventID])
            #expect(message.subject == "fp.restart.\(message.device)")
        }
        for device in devices {
            #expect(
                messages.filter { $0.device == device }.map(\.eventID)
                    == feed.filter { $0.event.device == device }.map(\.event.id))
        }
    }

    @Test("a batch published again is acked as a duplicate and counts as delivered; the stream stores each event once")
    func repeatsDroppedByJetStream() async throws {
        let url = try #require(TestNATS.url)
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
        let unique = UUID().uuidString.prefix(8)
        let stream = "FP_REPEAT_\(unique)"
        let sink = NATSJetStreamSink(
            name: "repeat", endpoint: try BrokerEndpoint.parse(url, scheme: "nats", defaultPort: 4222).get(),
            subject: try NATSSubjectTemplate("fp.repeat\(unique).{device}"), stream: stream, batchSize: 100,
            maxAttempts: 3, timeout: .seconds(10))
        let first = await sink.deliver(Array(feed[0..<5]), attempt: 1)
        #expect(first.confirmed == 5)
        #expect(first.failure == nil)
        // A crash before the cursor moved: the same events again, and the next ones.
        let again = await sink.deliver(Array(feed[2..<8]), attempt: 1)
        #expect(again.confirmed == 6)
        #expect(again.failure == nil)
        await sink.shutdown()
        let messages = try await TestNATS.messages(url, stream: stream)
        #expect(messages.map(\.eventID) == feed.map(\.event.id))
    }
}
