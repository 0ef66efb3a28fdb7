import FencepostCore
import FencepostService
import FencepostStore
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

@Suite("Auth")
struct AuthTests {
    enum Caller: String, CaseIterable, CustomTestStringConvertible {
        case none, wrong, admin, reader, phone, other
        var testDescription: String { rawValue }

        func token(_ fixture: ServiceFixture) -> String? {
            switch self {
            case .none: return nil
            case .wrong: return "fp_not-a-token"
            case .admin: return fixture.admin
            case .reader: return fixture.reader
            case .phone: return fixture.phone
            case .other: return fixture.otherDevice
            }
        }
    }

    /// Who may do what: status per caller for each request.
    static let matrix:
        [(name: String, method: HTTPRequest.Method, uri: String, body: String?, expected: [Caller: Int])] = [
            (
                "post phone's fixes", .post, "/v1/devices/phone/locations",
                ServiceFixture.batchBody(ServiceFixture.walk()),
                [.none: 401, .wrong: 401, .admin: 200, .reader: 403, .phone: 200, .other: 403]
            ),
            (
                "read all events", .get, "/v1/events", nil,
                [.none: 401, .wrong: 401, .admin: 200, .reader: 200, .phone: 200, .other: 200]
            ),
            (
                "read phone's events", .get, "/v1/events?device=phone", nil,
                [.none: 401, .wrong: 401, .admin: 200, .reader: 200, .phone: 200, .other: 403]
            ),
            (
                "apply regions", .post, "/v1/regions/apply", #"{"type":"FeatureCollection","features":[]}"#,
                [.none: 401, .wrong: 401, .admin: 200, .reader: 403, .phone: 403, .other: 403]
            ),
            (
                "delete a region", .delete, "/v1/regions/home", nil,
                [.none: 401, .wrong: 401, .admin: 200, .reader: 403, .phone: 403, .other: 403]
            ),
            (
                "health", .get, "/healthz", nil,
                [.none: 200, .wrong: 200, .admin: 200, .reader: 200, .phone: 200, .other: 200]
            ),
            (
                "metrics", .get, "/metrics", nil,
                [.none: 200, .wrong: 200, .admin: 200, .reader: 200, .phone: 200, .other: 200]
            ),
        ]

    @Test("status by scope; a refused write writes nothing", arguments: Caller.allCases)
    func matrix(caller: Caller) async throws {
        for entry in Self.matrix {
            let fixture = try await ServiceFixture()
            defer { fixture.cleanUp() }
            let before = try await fixture.store.regionsRevision()
            try await fixture.app().test(.router) { client in
                let response = try await client.execute(
                    uri: entry.uri, method: entry.method, headers: .bearer(caller.token(fixture)),
                    body: entry.body.map { ByteBuffer(string: $0) })
                #expect(response.status.code == entry.expected[caller], "\(entry.name) as \(caller)")
            }
            if entry.expected[caller] != 200, entry.method != .get {
                let counts = try await fixture.counts()
                #expect(counts.events == 0 && counts.devices == 0, "\(entry.name) as \(caller) wrote fixes")
                await #expect(
                    try fixture.store.regionsRevision() == before, "\(entry.name) as \(caller) changed regions")
            }
        }
    }

    @Test("a device token reads only its own device's events and visits")
    func deviceTokenIsConfined() async throws {
        let fixture = try await ServiceFixture()
        defer { fixture.cleanUp() }
        try await fixture.app().test(.router) { client in
            for device in ["phone", "other"] {
                _ = try await client.execute(
                    uri: "/v1/devices/\(device)/locations", method: .post, headers: .bearer(fixture.admin),
                    body: ByteBuffer(string: ServiceFixture.batchBody(ServiceFixture.walk())))
            }
            let own = try await client.execute(uri: "/v1/events", method: .get, headers: .bearer(fixture.phone))
            let devices = Set(own.json?["events"]?.arrayValue?.compactMap { $0["device"]?.stringValue } ?? [])
            #expect(devices == ["phone"])
            let all = try await client.execute(uri: "/v1/events", method: .get, headers: .bearer(fixture.reader))
            #expect(all.json?["events"]?.arrayValue?.count == 4)
            let visits = try await client.execute(
                uri: "/v1/visits", method: .get, headers: .bearer(fixture.otherDevice))
            #expect(
                Set(visits.json?["visits"]?.arrayValue?.compactMap { $0["device"]?.stringValue } ?? []) == ["other"])
        }
    }

    @Test("metrics can require a token")
    func metricsToken() async throws {
        let fixture = try await ServiceFixture()
        defer { fixture.cleanUp() }
        try await fixture.app(ServiceConfiguration(metricsRequireToken: true)).test(.router) { client in
            #expect(try await client.execute(uri: "/metrics", method: .get).status == .unauthorized)
            let scraped = try await client.execute(uri: "/metrics", method: .get, headers: .bearer(fixture.reader))
            #expect(scraped.status == .ok)
            #expect(scraped.text.contains(#"fencepost_outbox_depth_rows{status="pending"}"#))
        }
    }

    /// Routes that need no token never look one up: with the store closed under it, a request
    /// carrying an unknown token (which no cache can answer) is still served on them, while a
    /// route that needs a token cannot be.
    @Test("routes that need no token do not look the request's token up")
    func noLookupWhereNoTokenIsNeeded() async throws {
        let fixture = try await ServiceFixture()
        defer { fixture.cleanUp() }
        try await fixture.app().test(.router) { client in
            await fixture.store.close()
            let unknown: HTTPFields = .bearer("fp_not-a-token")
            // (/metrics needs no token either, but reads the store for its outbox gauges.)
            for uri in ["/openapi.json", "/", "/assets/live.js", "/assets/live.css", "/assets/map.js"] {
                #expect(try await client.execute(uri: uri, method: .get, headers: unknown).status == .ok, "\(uri)")
            }
            let needsToken = try await client.execute(uri: "/v1/events", method: .get, headers: unknown)
            #expect(needsToken.status.code >= 500, "the lookup of a route that needs a token fails with the store")
        }
    }

    @Test("a revoked token stops working within a second")
    func revoked() async throws {
        let fixture = try await ServiceFixture()
        defer { fixture.cleanUp() }
        try await fixture.app().test(.router) { client in
            #expect(
                try await client.execute(uri: "/v1/events", method: .get, headers: .bearer(fixture.reader)).status
                    == .ok)
            await #expect(try fixture.store.revokeToken(name: "reader"))
            try await Task.sleep(for: .milliseconds(1100))
            #expect(
                try await client.execute(uri: "/v1/events", method: .get, headers: .bearer(fixture.reader)).status
                    == .unauthorized)
        }
    }
}
