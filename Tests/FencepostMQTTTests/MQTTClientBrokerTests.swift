import FencepostMQTT
import FencepostTestSupport
import Foundation
import Logging
import Synchronization
import Testing

/// The client against a real mosquitto (tools/mosquitto), with paho-mqtt as the other peer.
@Suite(.enabled(if: TestBroker.available, "needs FENCEPOST_TEST_MQTT and FENCEPOST_TEST_PYTHON (tools/test)"))
struct MQTTClientBrokerTests {
    /// `keepAlive` short, so a lost broker is noticed within the tests' waits; the window test
    /// takes a longer one: while the window is full the client reads nothing, the broker's
    /// PINGRESP included, and on a loaded machine 2 + 2 s of that ended the connection.
    private func configuration(_ clientID: String, topics: [String] = [], keepAlive: Duration = .seconds(2))
        -> MQTTConfiguration
    {
        MQTTConfiguration(
            host: TestBroker.endpoint.host, port: TestBroker.endpoint.port, clientID: clientID,
            subscriptions: topics.map { MQTTSubscription(filter: $0, qos: .atLeastOnce) }, keepAlive: keepAlive,
            pingTimeout: keepAlive, receiveMaximum: 5)
    }

    /// Collects what a client delivers; acknowledges only when told to.
    private final class Inbox: Sendable {
        let messages = Mutex<[MQTTMessage]>([])
        let connections = Mutex<Int>(0)

        func wait(for count: Int, seconds: Double = 20) async throws -> [MQTTMessage] {
            let deadline = ContinuousClock.now + .seconds(seconds)
            while ContinuousClock.now < deadline {
                let now = messages.withLock { $0 }
                if now.count >= count { return now }
                try await Task.sleep(for: .milliseconds(20))
            }
            return messages.withLock { $0 }
        }
    }

    /// Runs a subscriber until `body` returns.
    private func withSubscriber<T>(
        _ client: MQTTClient, _ inbox: Inbox, _ body: () async throws -> T
    ) async throws -> T {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                await client.run(
                    onMessage: { message in inbox.messages.withLock { $0.append(message) } },
                    onEvent: { event in if case .connected = event { inbox.connections.withLock { $0 += 1 } } })
            }
            defer { group.cancelAll() }
            while inbox.connections.withLock({ $0 }) == 0 { try await Task.sleep(for: .milliseconds(20)) }
            return try await body()
        }
    }

    private func publish(_ topic: String, _ payloads: [String]) async throws {
        _ = try await offThePool {
            try TestBroker.runPython(
                """
                import sys, paho.mqtt.client as mqtt
                c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="pub-" + sys.argv[3])
                c.connect(sys.argv[1], int(sys.argv[2])); c.loop_start()
                for p in sys.argv[4:]:
                    c.publish(sys.argv[3], p, qos=1).wait_for_publish(10)
                c.disconnect(); c.loop_stop()
                """, arguments: [topic] + payloads)
        }
    }

    @Test func anUnacknowledgedMessageComesAgainAfterAReconnectAndAnAcknowledgedOneDoesNot() async throws {
        let id = "redeliver-\(UUID().uuidString.prefix(8))"
        let topic = "test/\(id)"
        let logger = Logger(label: "test")
        // The session is made (subscribed) before anything is published.
        let first = Inbox()
        try await withSubscriber(MQTTClient(configuration: configuration(id, topics: [topic]), logger: logger), first) {
        }
        try await publish(topic, ["one", "two"])

        let second = Inbox()
        let client = MQTTClient(configuration: configuration(id, topics: [topic]), logger: logger)
        let received = try await withSubscriber(client, second) { try await second.wait(for: 2) }
        #expect(received.map { String(decoding: $0.payload, as: UTF8.self) } == ["one", "two"])
        // Not acknowledged: the next connection gets both again, marked as sent before.
        let third = Inbox()
        let client3 = MQTTClient(configuration: configuration(id, topics: [topic]), logger: logger)
        let again = try await withSubscriber(client3, third) {
            let again = try await third.wait(for: 2)
            for message in again { await client3.acknowledge(message) }
            try await Task.sleep(for: .milliseconds(300))
            return again
        }
        #expect(again.map { String(decoding: $0.payload, as: UTF8.self) } == ["one", "two"])
        #expect(again.allSatisfy { $0.publish.duplicate })
        let fourth = Inbox()
        let rest = try await withSubscriber(
            MQTTClient(configuration: configuration(id, topics: [topic]), logger: logger), fourth
        ) { try await fourth.wait(for: 1, seconds: 1) }
        #expect(rest.isEmpty)
    }

    @Test func theWindowStopsDeliveryUntilMessagesAreAcknowledged() async throws {
        let id = "window-\(UUID().uuidString.prefix(8))"
        let topic = "test/\(id)"
        let inbox = Inbox()
        let client = MQTTClient(
            configuration: configuration(id, topics: [topic], keepAlive: .seconds(30)), logger: Logger(label: "test"))
        try await withSubscriber(client, inbox) {
            try await publish(topic, (1...12).map(String.init))
            let held = try await inbox.wait(for: 12, seconds: 1.5)
            // Five delivered and not acknowledged: the client reads no more.
            #expect(held.count == 5)
            #expect(client.inFlight == 5)
            for message in held { await client.acknowledge(message) }
            // Five more, then the window is full again.
            let next = try await inbox.wait(for: 12, seconds: 1.5)
            #expect(next.count == 10)
            for message in next.dropFirst(5) { await client.acknowledge(message) }
            let all = try await inbox.wait(for: 12)
            #expect(all.map { String(decoding: $0.payload, as: UTF8.self) } == (1...12).map(String.init))
        }
    }

    @Test func publishingWaitsForTheBrokersAcknowledgement() async throws {
        let id = "publisher-\(UUID().uuidString.prefix(8))"
        let inbox = Inbox()
        let subscriber = MQTTClient(
            configuration: configuration("sub-\(id)", topics: ["test/\(id)"]), logger: Logger(label: "test"))
        let publisher = MQTTClient(configuration: configuration(id), logger: Logger(label: "test"))
        try await withSubscriber(subscriber, inbox) {
            let publisherInbox = Inbox()
            try await withSubscriber(publisher, publisherInbox) {
                try await publisher.publish(topic: "test/\(id)", payload: Array("hello".utf8))
            }
            let got = try await inbox.wait(for: 1)
            #expect(got.first.map { String(decoding: $0.payload, as: UTF8.self) } == "hello")
        }
        await #expect(throws: MQTTPublishError.notConnected) {
            try await publisher.publish(topic: "test/\(id)", payload: [])
        }
    }

    @Test func aBrokerThatIsNotThereIsTriedAgainWithoutEnd() async throws {
        var settings = configuration("nobody")
        settings.port = 1  // nothing listens there
        let failures = Mutex(0)
        let client = MQTTClient(configuration: settings, logger: Logger(label: "test"))
        let task = Task {
            await client.run(
                onMessage: { _ in },
                onEvent: { event in if case .disconnected = event { failures.withLock { $0 += 1 } } })
        }
        // Two failed attempts, however slowly a loaded machine makes them.
        let deadline = ContinuousClock.now + .seconds(60)
        while failures.withLock({ $0 }) < 2, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        task.cancel()
        await task.value
        #expect(failures.withLock { $0 } >= 2)
    }
}
