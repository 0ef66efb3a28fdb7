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

@Suite("Live location ingest")
struct LocationIngestTests {
    @Test("a batch that crosses a region answers with its enter and exit; events and visits read them back")
    func batchCrossesRegion() async throws {
        let fixture = try await ServiceFixture()
        defer { fixture.cleanUp() }
        try await fixture.app().test(.router) { client in
            let body = ServiceFixture.batchBody(ServiceFixture.walk())
            let posted = try await client.execute(
                uri: "/v1/devices/phone/locations", method: .post, headers: .bearer(fixture.phone),
                body: ByteBuffer(string: body))
            #expect(posted.status == .ok)
            let answer = try #require(posted.json)
            #expect(answer["accepted"]?.numberValue == 13)
            let kinds = answer["events"]?.arrayValue?.compactMap { $0["kind"]?.stringValue }
            #expect(kinds == ["enter", "exit"])

            let events = try await client.execute(
                uri: "/v1/events?device=phone", method: .get, headers: .bearer(fixture.reader))
            #expect(events.json?["events"]?.arrayValue?.compactMap { $0["kind"]?.stringValue } == ["enter", "exit"])
            let visits = try await client.execute(uri: "/v1/visits", method: .get, headers: .bearer(fixture.phone))
            let visit = try #require(visits.json?["visits"]?.arrayValue?.first)
            #expect(visit["status"]?.stringValue == "closed")
            #expect(visit["region"]?.stringValue == "home")

            // The same batch again: every fix already seen, nothing new.
            let again = try await client.execute(
                uri: "/v1/devices/phone/locations", method: .post, headers: .bearer(fixture.phone),
                body: ByteBuffer(string: body))
            #expect(again.json?["accepted"]?.numberValue == 0)
            #expect(again.json?["dropped"]?["already_seen"]?.numberValue == 13)
        }
        await #expect(try fixture.counts().events == 2)
    }

    @Test(
        "a batch is read the same whatever its valid JSON looks like: member order, whitespace, escapes, other members")
    func batchInAnyShape() async throws {
        let fixture = try await ServiceFixture()
        defer { fixture.cleanUp() }
        let items = ServiceFixture.walk().enumerated().map { index, fix in
            index.isMultiple(of: 2)
                ? #"{ "lon" : \#(fix.lon),"note":{"a":[1,{"b":null}],"c":"]}"},\#n "l\u0061t":\#(fix.lat), "time":\#(fix.time) }"#
                : #"{"time":"\#(Timestamp.format(seconds: fix.time))","accuracy":null,"lat":\#(fix.lat),"lon":\#(fix.lon)}"#
        }
        let body = #"{"device":"ignored","fixes":5,"fixes":[ "# + items.joined(separator: " ,\n") + "]\t}"
        try await fixture.app().test(.router) { client in
            let posted = try await client.execute(
                uri: "/v1/devices/phone/locations", method: .post, headers: .bearer(fixture.phone),
                body: ByteBuffer(string: body))
            #expect(posted.status == .ok)
            #expect(posted.json?["accepted"]?.numberValue == 13)
            #expect(posted.json?["events"]?.arrayValue?.compactMap { $0["kind"]?.stringValue } == ["enter", "exit"])
        }
    }

    @Test("durable_commits is on unless the config turns it off; either way batches are answered once committed")
    func durableCommitsSetting() async throws {
        #expect(ServiceConfiguration().durableCommits)
        let file = try TemporaryFile(#"{"durable_commits": false}"#, suffix: ".json")
        defer { file.remove() }
        let configuration = try ServiceConfiguration.load(path: file.path)
        #expect(!configuration.durableCommits)

        let fixture = try await ServiceFixture()
        defer { fixture.cleanUp() }
        try await fixture.app(configuration).test(.router) { client in
            let posted = try await client.execute(
                uri: "/v1/devices/phone/locations", method: .post, headers: .bearer(fixture.phone),
                body: ByteBuffer(string: ServiceFixture.batchBody(ServiceFixture.walk())))
            #expect(posted.json?["accepted"]?.numberValue == 13)
        }
        await #expect(try fixture.counts().events == 2)
    }

    @Test("a walk split over requests gives the same events as one request")
    func splitAcrossRequests() async throws {
        let fixture = try await ServiceFixture()
        defer { fixture.cleanUp() }
        let walk = ServiceFixture.walk()
        try await fixture.app().test(.router) { client in
            for part in [Array(walk[..<6]), Array(walk[6...])] {
                let response = try await client.execute(
                    uri: "/v1/devices/phone/locations", method: .post, headers: .bearer(fixture.admin),
                    body: ByteBuffer(string: ServiceFixture.batchBody(part)))
                #expect(response.status == .ok)
            }
        }
        let whole = try await ServiceFixture()
        defer { whole.cleanUp() }
        try await whole.app().test(.router) { client in
            _ = try await client.execute(
                uri: "/v1/devices/phone/locations", method: .post, headers: .bearer(whole.admin),
                body: ByteBuffer(string: ServiceFixture.batchBody(walk)))
        }
        var split: [String] = []
        var single: [String] = []
        try await fixture.store.forEachEvent(EventQuery()) { split.append("\($0.id) \($0.kind) \($0.time)") }
        try await whole.store.forEachEvent(EventQuery()) { single.append("\($0.id) \($0.kind) \($0.time)") }
        #expect(split == single)
        #expect(split.count == 2)
    }

    @Test("OwnTracks payloads: the device is user/device from the headers, the answer a JSON array")
    func ownTracks() async throws {
        let fixture = try await ServiceFixture()
        defer { fixture.cleanUp() }
        let token = try await fixture.store.createToken(name: "alice", scope: .device("alice/phone"))
        try await fixture.app().test(.router) { client in
            for (index, fix) in ServiceFixture.walk().enumerated() {
                let payload =
                    #"{"_type":"location","lat":\#(fix.lat),"lon":\#(fix.lon),"tst":\#(Int(fix.time)),"acc":5,"tid":"ph"}"#
                var headers = HTTPFields.bearer(token)
                headers[HTTPField.Name("X-Limit-U")!] = "alice"
                headers[HTTPField.Name("X-Limit-D")!] = "phone"
                let response = try await client.execute(
                    uri: "/owntracks", method: .post, headers: headers, body: ByteBuffer(string: payload))
                #expect(response.status == .ok)
                // The first answer sends the phone its waypoints (home); the set holds after.
                let answer = response.json?.arrayValue
                #expect(answer?.count == (index == 0 ? 1 : 0))
            }
            // Other message types are accepted and ignored.
            let lwt = try await client.execute(
                uri: "/owntracks", method: .post,
                headers: [
                    .authorization: "Basic " + Data("alice:\(token)".utf8).base64EncodedString(),
                    HTTPField.Name("X-Limit-D")!: "phone",
                ],
                body: ByteBuffer(string: #"{"_type":"lwt","tst":1}"#))
            #expect(lwt.status == .ok)
        }
        var kinds: [String] = []
        try await fixture.store.forEachEvent(EventQuery(device: "alice/phone")) { kinds.append($0.kind) }
        #expect(kinds == ["enter", "exit"])
    }

    @Test("OsmAnd / Traccar Client: one fix per request, token as a query parameter, epoch seconds or milliseconds")
    func osmAnd() async throws {
        let fixture = try await ServiceFixture()
        defer { fixture.cleanUp() }
        try await fixture.app().test(.router) { client in
            for (index, fix) in ServiceFixture.walk().enumerated() {
                let stamp = index.isMultiple(of: 2) ? String(Int(fix.time)) : String(Int(fix.time) * 1000)
                let uri =
                    "/osmand?id=phone&lat=\(fix.lat)&lon=\(fix.lon)&timestamp=\(stamp)&accuracy=5&token=\(fixture.phone)"
                let response = try await client.execute(uri: uri, method: index.isMultiple(of: 3) ? .post : .get)
                #expect(response.status == .ok)
            }
            let wrongDevice = try await client.execute(
                uri: "/osmand?id=other&lat=47&lon=8&timestamp=1750001000&token=\(fixture.phone)", method: .get)
            #expect(wrongDevice.status == .forbidden)
        }
        var kinds: [String] = []
        try await fixture.store.forEachEvent(EventQuery(device: "phone")) { kinds.append($0.kind) }
        #expect(kinds == ["enter", "exit"])
    }

    @Test(
        "malformed bodies get a 4xx with a reason and write nothing",
        arguments: [
            (#"{"fixes":[{"time":"2025-06-01T06:00:00Z","lat":47,"lon":8}"#, 400, "bad_request"),
            (#"{"fixes":[{"time":"2025-06-01T06:00:00Z","lat":NaN,"lon":8}]}"#, 400, "bad_request"),
            (#"{"fixes":[{"time":"2025-06-01T06:00:00Z","lat":"NaN","lon":8}]}"#, 422, "invalid_fix"),
            (
                #"{"fixes":[{"time":"2025-06-01T06:00:00Z","lat":47,"lon":8},{"time":"2025-06-01T06:01:00Z","lat":91,"lon":8}]}"#,
                422, "invalid_fix"
            ),
            (#"{"fixes":[{"lat":47,"lon":8}]}"#, 422, "invalid_fix"),
            (#"{"fixes":[{"time":"yesterday","lat":47,"lon":8}]}"#, 422, "invalid_fix"),
            (#"[1,2,3]"#, 400, "bad_request"),
            // Read member by member, but judged as a whole: a syntax error after an invalid fix is still a 400.
            (#"{"fixes":[{"lat":47,"lon":8}],}"#, 400, "bad_request"),
            (#"{"fixes":[{"lat":47,"lon":8}]} x"#, 400, "bad_request"),
            (#"{"fixes":[1]}"#, 422, "invalid_fix"),
            (#"{"fixes":{"time":1}}"#, 400, "bad_request"),
            (#"{"fixes":[],"fixes":null}"#, 400, "bad_request"),
        ])
    func malformed(body: String, status: Int, code: String) async throws {
        let fixture = try await ServiceFixture()
        defer { fixture.cleanUp() }
        try await fixture.app().test(.router) { client in
            let response = try await client.execute(
                uri: "/v1/devices/phone/locations", method: .post, headers: .bearer(fixture.phone),
                body: ByteBuffer(string: body))
            #expect(response.status.code == status)
            #expect(response.json?["error"]?["code"]?.stringValue == code)
            #expect(response.json?["error"]?["message"]?.stringValue?.isEmpty == false)
        }
        let counts = try await fixture.counts()
        #expect(counts.events == 0 && counts.outbox == 0 && counts.devices == 0)
    }

    @Test("a body past the limit is refused with 413 and writes nothing")
    func tooLarge() async throws {
        let fixture = try await ServiceFixture()
        defer { fixture.cleanUp() }
        let body = ServiceFixture.batchBody(ServiceFixture.walk())
        try await fixture.app(ServiceConfiguration(maxBodyBytes: body.utf8.count - 1)).test(.router) { client in
            let response = try await client.execute(
                uri: "/v1/devices/phone/locations", method: .post, headers: .bearer(fixture.phone),
                body: ByteBuffer(string: body))
            #expect(response.status == .contentTooLarge)
            #expect(response.json?["error"]?["code"]?.stringValue == "body_too_large")
        }
        await #expect(try fixture.counts().devices == 0)
    }
}
