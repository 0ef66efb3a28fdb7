import Crypto
import FencepostCore
import FencepostService
import FencepostStore
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import Testing

/// A real HTTP receiver on 127.0.0.1 that records deliveries and answers as scripted.
actor WebhookInbox {
    struct Delivery {
        var eventID: String
        var body: String
        var signature: String
        var attempt: Int
    }

    private(set) var deliveries: [Delivery] = []
    private var script: [Int]
    private let otherwise: Int

    /// Answers `script` in order, then `otherwise` for every later request.
    init(script: [Int] = [], otherwise: Int = 200) {
        self.script = script
        self.otherwise = otherwise
    }

    func receive(_ delivery: Delivery) -> Int {
        deliveries.append(delivery)
        return script.isEmpty ? otherwise : script.removeFirst()
    }

    func receiver() -> some ApplicationProtocol {
        let router = Router()
        router.post("/hook") { request, _ -> Response in
            var request = request
            let body = try await request.collectBody(upTo: 1 << 20)
            let status = await self.receive(
                Delivery(
                    eventID: request.headers[HTTPField.Name("X-Fencepost-Event-ID")!] ?? "",
                    body: String(buffer: body),
                    signature: request.headers[HTTPField.Name("X-Fencepost-Signature")!] ?? "",
                    attempt: Int(request.headers[HTTPField.Name("X-Fencepost-Attempt")!] ?? "") ?? 0))
            return Response(status: .init(code: status))
        }
        var logger = Logger(label: "receiver")
        logger.logLevel = .warning
        return Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)), logger: logger)
    }
}

@Suite("Webhooks")
struct WebhookTests {
    static let secret = "s3cret"

    /// Polls until `done` holds or 15 s pass.
    static func eventually(_ done: () async throws -> Bool) async throws {
        for _ in 0..<300 {
            if try await done() { return }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    @Test("every new event reaches the webhook, signed; a 500 is retried until it is acknowledged")
    func delivered() async throws {
        let fixture = try await ServiceFixture()
        defer { fixture.cleanUp() }
        let inbox = WebhookInbox(script: [500])
        try await inbox.receiver().test(.live) { receiver in
            let configuration = ServiceConfiguration(webhooks: [
                .init(name: "ops", url: "http://127.0.0.1:\(receiver.port!)/hook", secret: Self.secret)
            ])
            try await fixture.app(configuration).test(.router) { client in
                let posted = try await client.execute(
                    uri: "/v1/devices/phone/locations", method: .post, headers: .bearer(fixture.phone),
                    body: ByteBuffer(string: ServiceFixture.batchBody(ServiceFixture.walk())))
                #expect(posted.status == .ok)
                try await Self.eventually {
                    let deliveries = await inbox.deliveries
                    return deliveries.count == 3
                }
            }
        }
        let deliveries = await inbox.deliveries
        var stored: [String] = []
        try await fixture.store.forEachEvent(EventQuery()) { stored.append($0.id) }
        // The first event is refused once (500), then delivered on its second attempt.
        #expect(deliveries.map(\.eventID) == [stored[0], stored[0], stored[1]])
        #expect(deliveries.map(\.attempt) == [1, 2, 1])
        for delivery in deliveries {
            let mac = HMAC<SHA256>.authenticationCode(
                for: Data(delivery.body.utf8), using: SymmetricKey(data: Data(Self.secret.utf8)))
            #expect(delivery.signature == "sha256=" + mac.map { String(format: "%02x", $0) }.joined())
            #expect(try JSONParser.parse(Array(delivery.body.utf8))["id"]?.stringValue == delivery.eventID)
        }
    }

    @Test("a webhook that refuses (4xx) gets each event once; they land in the dead-letter list")
    func deadLetters() async throws {
        let fixture = try await ServiceFixture()
        defer { fixture.cleanUp() }
        let inbox = WebhookInbox(otherwise: 410)
        try await inbox.receiver().test(.live) { receiver in
            let configuration = ServiceConfiguration(webhooks: [
                .init(url: "http://127.0.0.1:\(receiver.port!)/hook", secret: Self.secret)
            ])
            try await fixture.app(configuration).test(.router) { client in
                _ = try await client.execute(
                    uri: "/v1/devices/phone/locations", method: .post, headers: .bearer(fixture.phone),
                    body: ByteBuffer(string: ServiceFixture.batchBody(ServiceFixture.walk())))
                try await Self.eventually { try await fixture.store.webhookDeadLetters().count == 2 }
                let listed = try await client.execute(
                    uri: "/v1/webhooks/dead-letters", method: .get, headers: .bearer(fixture.admin))
                let letters = listed.json?["dead_letters"]?.arrayValue ?? []
                #expect(letters.count == 2)
                #expect(letters.first?["last_error"]?.stringValue == "HTTP 410")
            }
        }
        #expect(await inbox.deliveries.count == 2)
    }

    @Test(
        "a webhook answering 5xx gets each event webhook_max_attempts times, then it is dead-lettered and the next one goes"
    )
    func givesUpAfterMaxAttempts() async throws {
        let fixture = try await ServiceFixture()
        defer { fixture.cleanUp() }
        let inbox = WebhookInbox(otherwise: 503)
        try await inbox.receiver().test(.live) { receiver in
            let configuration = ServiceConfiguration(
                webhooks: [.init(name: "ops", url: "http://127.0.0.1:\(receiver.port!)/hook", secret: Self.secret)],
                webhookMaxAttempts: 2)
            try await fixture.app(configuration).test(.router) { client in
                let posted = try await client.execute(
                    uri: "/v1/devices/phone/locations", method: .post, headers: .bearer(fixture.phone),
                    body: ByteBuffer(string: ServiceFixture.batchBody(ServiceFixture.walk())))
                #expect(posted.status == .ok)
                try await Self.eventually { try await fixture.store.webhookDeadLetters().count == 2 }
            }
        }
        var stored: [String] = []
        try await fixture.store.forEachEvent(EventQuery()) { stored.append($0.id) }
        let deliveries = await inbox.deliveries
        // Two attempts each, a second apart, in outbox order; no third.
        #expect(deliveries.map(\.eventID) == [stored[0], stored[0], stored[1], stored[1]])
        #expect(deliveries.map(\.attempt) == [1, 2, 1, 2])
        let letters = try await fixture.store.webhookDeadLetters()
        #expect(letters.map(\.eventID) == stored)
        #expect(letters.allSatisfy { $0.webhook == "ops" && $0.attempts == 2 && $0.lastError == "HTTP 503" })
        // Given up on, the events are behind the webhook's cursor: a restart does not resend them.
        await #expect(try fixture.store.webhookCursor("ops") == letters.map(\.outboxSeq).max())
    }
}
