import FencepostCore
import FencepostFormats
import FencepostService
import FencepostStore
import FencepostTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import Testing

/// A real HTTP receiver that records each request's method, path, one header and body.
private actor TemplateReceiver {
    struct Request: Sendable {
        var method: String
        var path: String
        var authorization: String
        var contentType: String
        var body: String
    }

    private(set) var requests: [Request] = []

    func record(_ request: Request) { requests.append(request) }

    func application() -> some ApplicationProtocol {
        let router = Router()
        let handler: @Sendable (Hummingbird.Request, BasicRequestContext) async throws -> Response = { request, _ in
            var request = request
            let body = try await request.collectBody(upTo: 1 << 20)
            await self.record(
                Request(
                    method: "\(request.method)", path: request.uri.path,
                    authorization: request.headers[.authorization] ?? "",
                    contentType: request.headers[.contentType] ?? "", body: String(buffer: body)))
            return Response(status: .ok)
        }
        router.put("/rooms/send/{txn}", use: handler)
        router.post("/ntfy", use: handler)
        var logger = Logger(label: "receiver")
        logger.logLevel = .warning
        return Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)), logger: logger)
    }
}

@Suite("Webhook templates")
struct WebhookTemplateTests {
    static func load(_ json: String) throws -> ServiceConfiguration {
        let file = try TemporaryFile(json, suffix: ".json")
        defer { file.remove() }
        return try ServiceConfiguration.load(path: file.path)
    }

    @Test(
        "a template makes the body (names, local time), the URL takes the event id, method and headers as configured; a text template goes as text"
    )
    func rendered() async throws {
        let fixture = try await ServiceFixture()
        defer { fixture.cleanUp() }
        let named =
            #"{"type":"Feature","id":"home","geometry":{"type":"Point","coordinates":[8.0,47.0]},"properties":{"radius":100,"name":"Home sweet home"}}"#
        try await fixture.store.applyRegions([
            try RegionConfigParser().region(fromFeature: Data(named.utf8), source: "test")
        ])
        _ = try await fixture.store.applyRoster(DeviceRoster([.init(device: "phone", name: "Alice's phone")]))
        let receiver = TemplateReceiver()
        try await receiver.application().test(.live) { client in
            let base = "http://127.0.0.1:\(client.port!)"
            let configuration = try Self.load(
                #"""
                {"webhooks": [
                  {"name": "matrix", "url": "\#(base)/rooms/send/{{id}}", "secret": "s", "method": "PUT",
                   "headers": {"Authorization": "Bearer syt_token"}, "template_tz": "Europe/Berlin",
                   "template": {"msgtype": "m.text", "body": "{{device_name}}: {{kind}} {{region_name}} at {{local_time}}"}},
                  {"name": "ntfy", "url": "\#(base)/ntfy", "secret": "s", "template": "{{device}} {{kind}} {{region}} {{time}}"}
                ]}
                """#)
            try await fixture.app(configuration).test(.router) { app in
                let posted = try await app.execute(
                    uri: "/v1/devices/phone/locations", method: .post, headers: .bearer(fixture.phone),
                    body: ByteBuffer(string: ServiceFixture.batchBody(ServiceFixture.walk())))
                #expect(posted.status == .ok)
                try await WebhookTests.eventually { await receiver.requests.count == 4 }
            }
        }
        var events: [EventRow] = []
        try await fixture.store.forEachEvent(EventQuery()) { events.append($0) }
        #expect(events.map(\.kind) == ["enter", "exit"])
        let requests = await receiver.requests
        let matrix = requests.filter { $0.method == "PUT" }
        #expect(matrix.map(\.path) == events.map { "/rooms/send/\($0.id)" })
        #expect(matrix.allSatisfy { $0.authorization == "Bearer syt_token" && $0.contentType == "application/json" })
        #expect(
            matrix.first?.body
                == #"{"body":"Alice's phone: enter Home sweet home at \#(Self.berlin(events[0].timeMs))","msgtype":"m.text"}"#
        )
        let ntfy = requests.filter { $0.path == "/ntfy" }
        #expect(ntfy.map(\.body) == events.map { "phone \($0.kind) home \($0.time)" })
        #expect(ntfy.allSatisfy { $0.contentType.hasPrefix("text/plain") })
    }

    /// `yyyy-MM-dd HH:mm` in Berlin, worked out with the offsets of June (UTC+2).
    static func berlin(_ milliseconds: Int64) -> String {
        let utc = Timestamp.format(milliseconds: milliseconds + 2 * 3_600_000)
        return String(utc.prefix(16)).replacingOccurrences(of: "T", with: " ")
    }

    @Test(
        "a bad template is refused naming the webhook and the field",
        arguments: [
            (
                #"{"webhooks":[{"name":"s","url":"http://h/x","secret":"k","template":{"text":"{{colour}}"}}]}"#,
                #"webhooks[0].template: webhook s: unknown placeholder {{colour}}"#
            ),
            (
                #"{"webhooks":[{"name":"s","url":"http://h/{{nope}}","secret":"k"}]}"#,
                #"webhooks[0].url: webhook s: unknown placeholder {{nope}}"#
            ),
            (
                #"{"webhooks":[{"name":"s","url":"http://h/x","secret":"k","template":"x","template_tz":"Mars/Olympus"}]}"#,
                #"webhooks[0].template_tz: webhook s: unknown time zone Mars/Olympus"#
            ),
            (
                #"{"webhooks":[{"name":"s","url":"http://h/x","secret":"k","method":"GET"}]}"#,
                #"webhooks[0].method: webhook s: must be POST or PUT, got GET"#
            ),
            (
                #"{"webhooks":[{"name":"s","url":"http://h/x","secret":"k","template_tz":"UTC"}]}"#,
                #"webhooks[0].template_tz: webhook s: given without template"#
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
}
