import AsyncHTTPClient
import FencepostCore
import FencepostServerTestSupport
import FencepostService
import FencepostStore
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import NIOHTTP1
import Testing

/// A group as a tenant (`--scope group:NAME`), through the real server on 127.0.0.1: it posts
/// for, reads and manages only its group's devices and the regions inside the group; anything
/// else is 403 and writes nothing.
@Suite("Group tokens")
struct GroupTokenTests {
    /// The fixture (home, for everyone) with a roster (a1, a2 and OwnTracks' ann/phone in alpha,
    /// b1 in beta), a depot for each group at home, and tokens for both groups.
    struct Tenants {
        let fixture: ServiceFixture
        let alpha: String
        let alphaReader: String
        let beta: String

        init() async throws {
            fixture = try await ServiceFixture()
            let store = fixture.store
            try await store.applyRoster(
                DeviceRoster([
                    .init(device: "a1", groups: ["alpha"]), .init(device: "a2", groups: ["alpha"]),
                    .init(device: "ann/phone", groups: ["alpha"]), .init(device: "b1", groups: ["beta"]),
                ]))
            try await store.applyRegions([
                try ServiceFixture.region(
                    id: "home", lat: ServiceFixture.home.lat, lon: ServiceFixture.home.lon, radius: 100),
                try Self.region("alpha-depot", groups: ["alpha"]), try Self.region("beta-depot", groups: ["beta"]),
            ])
            alpha = try await store.createToken(name: "alpha", scope: .group("alpha", readOnly: false))
            alphaReader = try await store.createToken(name: "alpha-reader", scope: .group("alpha", readOnly: true))
            beta = try await store.createToken(name: "beta", scope: .group("beta", readOnly: false))
        }

        /// A 100 m circle at home for `groups`, as a GeoJSON Feature.
        static func feature(_ id: String, groups: [String] = [], devices: [String] = [], radius: Double = 100) -> String
        {
            let selectors =
                (groups.isEmpty ? "" : #","groups":["# + groups.map { "\"\($0)\"" }.joined(separator: ",") + "]")
                + (devices.isEmpty ? "" : #","devices":["# + devices.map { "\"\($0)\"" }.joined(separator: ",") + "]")
            return
                #"{"type":"Feature","id":"\#(id)","geometry":{"type":"Point","coordinates":[\#(ServiceFixture.home.lon),\#(ServiceFixture.home.lat)]},"properties":{"radius":\#(radius)\#(selectors)}}"#
        }

        static func region(_ id: String, groups: [String]) throws -> Region {
            try RegionConfigParser().region(fromFeature: Data(feature(id, groups: groups).utf8), source: "test")
        }

        /// What a refusal must leave unchanged: events, outbox, devices, and every region's version and content.
        func state() async throws -> String {
            let counts = try await fixture.counts()
            let regions = try await fixture.store.monitoredRegions().map {
                "\($0.region.id) v\($0.version) \($0.region.contentHash)"
            }
            return "\(counts) \(regions) revision \(try await fixture.store.regionsRevision())"
        }
    }

    static func post(_ device: String, token: String, client: some TestClientProtocol) async throws -> Int {
        let response = try await client.execute(
            uri: "/v1/devices/\(device)/locations", method: .post, headers: .bearer(token),
            body: ByteBuffer(string: ServiceFixture.batchBody(ServiceFixture.walk())))
        return Int(response.status.code)
    }

    static func get(_ uri: String, token: String, client: some TestClientProtocol) async throws -> (Int, JSONValue?) {
        let response = try await client.execute(uri: uri, method: .get, headers: .bearer(token))
        return (Int(response.status.code), response.json)
    }

    @Test("posts only for the group's devices, on every location route; a read-only one posts nothing")
    func postsOnlyForMembers() async throws {
        let tenants = try await Tenants()
        defer { tenants.fixture.cleanUp() }
        try await tenants.fixture.app().test(.live) { client in
            let before = try await tenants.state()
            // Another group's device, a device on no roster, a member with a read-only token.
            #expect(try await Self.post("b1", token: tenants.alpha, client: client) == 403)
            #expect(try await Self.post("stranger", token: tenants.alpha, client: client) == 403)
            #expect(try await Self.post("a1", token: tenants.alphaReader, client: client) == 403)
            let ownTracks =
                #"{"_type":"location","lat":\#(ServiceFixture.home.lat),"lon":\#(ServiceFixture.home.lon),"tst":1750000000,"acc":5}"#
            for (user, device, token, expected) in [
                ("bob", "phone", tenants.alpha, 403), ("ann", "phone", tenants.alphaReader, 403),
            ] {
                var headers = HTTPFields.bearer(token)
                headers[HTTPField.Name("X-Limit-U")!] = user
                headers[HTTPField.Name("X-Limit-D")!] = device
                let response = try await client.execute(
                    uri: "/owntracks", method: .post, headers: headers, body: ByteBuffer(string: ownTracks))
                #expect(Int(response.status.code) == expected, "\(user)/\(device)")
            }
            let osmAnd = try await client.execute(
                uri: "/osmand?id=b1&lat=47&lon=8&timestamp=1750000000&accuracy=5&token=\(tenants.alpha)", method: .get)
            #expect(osmAnd.status == .forbidden)
            #expect(try await tenants.state() == before, "no refusal writes anything")

            // Members, on each route.
            #expect(try await Self.post("a1", token: tenants.alpha, client: client) == 200)
            var headers = HTTPFields.bearer(tenants.alpha)
            headers[HTTPField.Name("X-Limit-U")!] = "ann"
            headers[HTTPField.Name("X-Limit-D")!] = "phone"
            let owned = try await client.execute(
                uri: "/owntracks", method: .post, headers: headers, body: ByteBuffer(string: ownTracks))
            #expect(owned.status == .ok)
            let osmAndMember = try await client.execute(
                uri: "/osmand?id=a2&lat=47&lon=8&timestamp=1750000000&accuracy=5&token=\(tenants.alpha)", method: .get)
            #expect(osmAndMember.status == .ok)
        }
        #expect(Set(try await tenants.fixture.store.deviceAnchors().keys) == ["a1", "a2", "ann/phone"])
    }

    @Test(
        "reads only the group's devices: events, exports, visits, stream, devices, sync changes, live; naming another device is 403"
    )
    func readsOnlyMembers() async throws {
        let tenants = try await Tenants()
        defer { tenants.fixture.cleanUp() }
        let http = HTTPClient(eventLoopGroupProvider: .singleton)
        do {
            try await tenants.fixture.app().test(.live) { client in
                // b1 first: its events come first in the outbox, where an unconfined stream would show them.
                #expect(try await Self.post("b1", token: tenants.fixture.admin, client: client) == 200)
                #expect(try await Self.post("a1", token: tenants.alpha, client: client) == 200)
                for token in [tenants.alpha, tenants.alphaReader] {
                    let (status, events) = try await Self.get("/v1/events", token: token, client: client)
                    #expect(status == 200)
                    let devices = events?["events"]?.arrayValue?.compactMap { $0["device"]?.stringValue }
                    #expect(devices == ["a1", "a1", "a1", "a1"], "enter and exit at home and at alpha's depot")
                    let regions = Set(events?["events"]?.arrayValue?.compactMap { $0["region"]?.stringValue } ?? [])
                    #expect(regions == ["home", "alpha-depot"])
                }
                // Two pages of two: the same four, in order.
                let (_, first) = try await Self.get("/v1/events?limit=2", token: tenants.alpha, client: client)
                let cursor = try #require(first?["next_cursor"]?.stringValue)
                let (_, second) = try await Self.get(
                    "/v1/events?limit=2&cursor=\(cursor)", token: tenants.alpha, client: client)
                #expect((first?["events"]?.arrayValue?.count, second?["events"]?.arrayValue?.count) == (2, 2))
                #expect(
                    second?["events"]?.arrayValue?.allSatisfy { $0["device"]?.stringValue == "a1" } == true)

                let csv = try await client.execute(
                    uri: "/v1/events?format=csv", method: .get, headers: .bearer(tenants.alpha))
                #expect(csv.text.split(separator: "\n").count == 5)
                #expect(!csv.text.contains(",b1,"))
                let ics = try await client.execute(
                    uri: "/v1/events?format=ics", method: .get, headers: .bearer(tenants.alpha))
                #expect(
                    ics.status == .ok && ics.text.components(separatedBy: "BEGIN:VEVENT").count == 3, "a1's two visits")

                let (_, visits) = try await Self.get("/v1/visits", token: tenants.alpha, client: client)
                #expect(
                    Set(visits?["visits"]?.arrayValue?.compactMap { $0["device"]?.stringValue } ?? []) == ["a1"])
                let (_, devices) = try await Self.get("/v1/devices", token: tenants.alpha, client: client)
                #expect(devices?.arrayValue?.compactMap { $0["device"]?.stringValue } == ["a1", "a2", "ann/phone"])
                let (_, changes) = try await Self.get("/v1/sync/changes", token: tenants.alpha, client: client)
                let changed = changes?["changes"]?.arrayValue ?? []
                #expect(changed.filter { $0["entity"]?.stringValue == "event" }.count == 4)
                #expect(changed.allSatisfy { ["event", "visit"].contains($0["entity"]?.stringValue) })
                #expect(Set(changed.compactMap { $0["payload"]?["device"]?.stringValue }) == ["a1"])
                let (_, snapshot) = try await Self.get("/v1/live/snapshot", token: tenants.alpha, client: client)
                #expect(snapshot?["devices"]?.arrayValue?.compactMap { $0["device"]?.stringValue } == ["a1"])
                #expect(snapshot?["scope"]?.stringValue == "group:alpha")
                let (_, tracks) = try await Self.get("/v1/live/tracks", token: tenants.alpha, client: client)
                #expect(tracks?["devices"]?.arrayValue?.compactMap { $0["device"]?.stringValue } == ["a1"])

                // Another group's device named: 403, not an empty answer; a member's: its rows.
                for uri in [
                    "/v1/events?device=b1", "/v1/events?device=b1&format=csv", "/v1/visits?device=b1",
                    "/v1/events/stream?device=b1", "/v1/events?device=stranger",
                ] {
                    #expect(try await Self.get(uri, token: tenants.alpha, client: client).0 == 403, "\(uri)")
                }
                let (_, a1Visits) = try await Self.get("/v1/visits?device=a1", token: tenants.alpha, client: client)
                #expect(a1Visits?["visits"]?.arrayValue?.count == 2)
                let (_, beta) = try await Self.get("/v1/events", token: tenants.beta, client: client)
                #expect(
                    Set(beta?["events"]?.arrayValue?.compactMap { $0["device"]?.stringValue } ?? []) == ["b1"])

                // The stream from the start: a1's four events, none of b1's before them.
                var request = HTTPClientRequest(url: "http://127.0.0.1:\(client.port!)/v1/events/stream")
                request.headers.add(name: "Authorization", value: "Bearer \(tenants.alpha)")
                request.headers.add(name: "Last-Event-ID", value: "0")
                let stream = try await http.execute(request, timeout: .seconds(30))
                #expect(stream.status.code == 200)
                let streamed = try await ServerSentEvents.within(
                    .seconds(15), Task { try await ServerSentEvents.read(stream, count: 4) })
                var a1Events = Set<String>()
                try await tenants.fixture.store.forEachEvent(EventQuery(device: "a1")) { a1Events.insert($0.id) }
                var feedIDs = Set<String>()
                for item in try await tenants.fixture.store.eventFeed(after: 0, device: "a1", limit: 100) {
                    feedIDs.insert(String(item.seq))
                }
                #expect(streamed.count == 4)
                #expect(Set(streamed.map(\.id)) == feedIDs)
                #expect(a1Events.count == 4)
            }
        } catch {
            try await http.shutdown()
            throw error
        }
        try await http.shutdown()
    }

    @Test(
        "regions: sees those that apply to its devices, changes only those inside the group; 403 and nothing written otherwise"
    )
    func regionsInsideTheGroup() async throws {
        let tenants = try await Tenants()
        defer { tenants.fixture.cleanUp() }
        try await tenants.fixture.app().test(.live) { client in
            func send(_ method: HTTPRequest.Method, _ uri: String, _ body: String? = nil, token: String) async throws
                -> (Int, String)
            {
                let response = try await client.execute(
                    uri: uri, method: method, headers: .bearer(token), body: body.map { ByteBuffer(string: $0) })
                return (Int(response.status.code), response.text)
            }
            let (_, listed) = try await Self.get("/v1/regions", token: tenants.alpha, client: client)
            #expect(
                listed?["features"]?.arrayValue?.compactMap { $0["properties"]?["id"]?.stringValue } == [
                    "alpha-depot", "home",
                ], "\(listed?.canonicalText() ?? "")")
            #expect(try await Self.get("/v1/regions/beta-depot", token: tenants.alpha, client: client).0 == 403)
            #expect(try await Self.get("/v1/regions/home", token: tenants.alpha, client: client).0 == 200)
            for (token, shown, hidden) in [
                (tenants.alpha, "alpha-depot", "beta-depot"), (tenants.beta, "beta-depot", "alpha-depot"),
            ] {
                let map = try await client.execute(uri: "/v1/live/map.svg", method: .get, headers: .bearer(token))
                #expect(map.text.contains(#"data-region-id="\#(shown)""#))
                #expect(!map.text.contains(#"data-region-id="\#(hidden)""#))
            }

            let before = try await tenants.state()
            let refused: [(HTTPRequest.Method, String, String?, String)] = [
                (.put, "/v1/regions/beta-depot", Tenants.feature("beta-depot", groups: ["alpha"]), tenants.alpha),
                (.delete, "/v1/regions/beta-depot", nil, tenants.alpha),
                (.delete, "/v1/regions/home", nil, tenants.alpha),
                (.put, "/v1/regions/home", Tenants.feature("home", groups: ["alpha"]), tenants.alpha),
                (.put, "/v1/regions/shared", Tenants.feature("shared", groups: ["alpha", "beta"]), tenants.alpha),
                (.put, "/v1/regions/all", Tenants.feature("all"), tenants.alpha),
                (.put, "/v1/regions/trucks", Tenants.feature("trucks", devices: ["a*"]), tenants.alpha),
                (.put, "/v1/regions/b1-home", Tenants.feature("b1-home", devices: ["b1"]), tenants.alpha),
                (.put, "/v1/regions/alpha-2", Tenants.feature("alpha-2", groups: ["alpha"]), tenants.alphaReader),
                (.delete, "/v1/regions/alpha-depot", nil, tenants.alphaReader),
                (.post, "/v1/regions/apply", #"{"type":"FeatureCollection","features":[]}"#, tenants.alpha),
            ]
            for (method, uri, body, token) in refused {
                let (status, text) = try await send(method, uri, body, token: token)
                #expect(status == 403, "\(method) \(uri): \(text)")
            }
            #expect(try await tenants.state() == before, "no refusal writes anything")

            let (added, _) = try await send(
                .put, "/v1/regions/a1-home", Tenants.feature("a1-home", devices: ["a1"]), token: tenants.alpha)
            #expect(added == 201)
            let (updated, _) = try await send(
                .put, "/v1/regions/alpha-depot", Tenants.feature("alpha-depot", groups: ["alpha"], radius: 150),
                token: tenants.alpha)
            #expect(updated == 200)
            #expect(try await send(.delete, "/v1/regions/a1-home", token: tenants.alpha).0 == 200)
            #expect(try await send(.delete, "/v1/regions/a1-home", token: tenants.alpha).0 == 404)
            let versions = try await tenants.fixture.store.monitoredRegions().map { "\($0.region.id) v\($0.version)" }
            #expect(versions == ["alpha-depot v2", "beta-depot v1", "home v1"])
        }
    }

    @Test("a group's plan and apply change only its own regions; another group's or a feature outside it is 403")
    func groupPlanAndApply() async throws {
        let tenants = try await Tenants()
        defer { tenants.fixture.cleanUp() }
        try await tenants.fixture.app().test(.live) { client in
            func post(_ uri: String, _ features: [String], token: String) async throws -> (Int, JSONValue?) {
                let response = try await client.execute(
                    uri: uri, method: .post, headers: .bearer(token),
                    body: ByteBuffer(
                        string: #"{"type":"FeatureCollection","features":["# + features.joined(separator: ",") + "]}"))
                return (Int(response.status.code), response.json)
            }
            let desired = [
                Tenants.feature("alpha-depot", groups: ["alpha"], radius: 150),
                Tenants.feature("a1-home", devices: ["a1"]),
            ]
            let before = try await tenants.state()
            for (uri, features, token) in [
                ("/v1/groups/beta/regions/apply", desired, tenants.alpha),
                ("/v1/groups/beta/regions/plan", desired, tenants.alpha),
                ("/v1/groups/alpha/regions/apply", desired, tenants.alphaReader),
                ("/v1/groups/alpha/regions/apply", desired, tenants.fixture.reader),
                ("/v1/groups/alpha/regions/apply", desired + [Tenants.feature("b", groups: ["beta"])], tenants.alpha),
                (
                    "/v1/groups/alpha/regions/apply", desired + [Tenants.feature("beta-depot", groups: ["alpha"])],
                    tenants.alpha
                ),
                ("/v1/groups/alpha/regions/apply", desired + [Tenants.feature("all")], tenants.fixture.admin),
            ] {
                let (status, answer) = try await post(uri, features, token: token)
                #expect(status == 403, "\(uri): \(answer?.canonicalText() ?? "")")
            }
            let (_, named) = try await post(
                "/v1/groups/alpha/regions/plan", desired + [Tenants.feature("b", groups: ["beta"])],
                token: tenants.alpha)
            #expect(
                named?["error"]?["message"]?.stringValue
                    == "region b does not stay inside group alpha: it selects the group beta")
            #expect(try await tenants.state() == before, "no refusal writes anything")

            let (planStatus, plan) = try await post(
                "/v1/groups/alpha/regions/plan", desired, token: tenants.alphaReader)
            #expect(planStatus == 200)
            #expect(plan?["changes"]?.arrayValue?.compactMap { $0["action"]?.stringValue } == ["add", "update"])
            #expect(try await tenants.state() == before, "a plan writes nothing")

            let (applied, answer) = try await post("/v1/groups/alpha/regions/apply", desired, token: tenants.alpha)
            #expect(applied == 200)
            #expect(
                answer?["add"] == .number(1) && answer?["update"] == .number(1) && answer?["unchanged"] == .number(0))
            let (_, again) = try await post("/v1/groups/alpha/regions/apply", desired, token: tenants.alpha)
            #expect(again?["unchanged"] == .number(2) && again?["changes"]?.arrayValue?.isEmpty == true)
            // The admin empties beta's: alpha's and everyone's stay.
            let (emptied, _) = try await post("/v1/groups/beta/regions/apply", [], token: tenants.fixture.admin)
            #expect(emptied == 200)
            let versions = try await tenants.fixture.store.monitoredRegions().map { "\($0.region.id) v\($0.version)" }
            #expect(versions == ["a1-home v1", "alpha-depot v2", "home v1"])
        }
    }
}
