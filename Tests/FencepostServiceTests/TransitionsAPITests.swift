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

/// Device-reported transitions over a live server on 127.0.0.1: the plain JSON route and
/// OwnTracks `transition` posts, merged with the events the same device's fixes make.
@Suite("Device-reported transitions over HTTP")
struct TransitionsAPITests {
    static let start = 1_750_000_000.0

    /// The store's visits as `entered–exited reason`, and its events as `kind [flags] visit`.
    static func contents(_ store: Store, device: String) async throws -> (visits: [String], events: [String]) {
        var visits: [String] = []
        try await store.forEachVisit(device: device) {
            visits.append("\($0.enteredAt)–\($0.exitedAt ?? "open") \($0.exitReason ?? "")")
        }
        var events: [String] = []
        try await store.forEachEvent(EventQuery(device: device)) {
            events.append("\($0.kind) [\($0.flags.joined(separator: ","))] \($0.visitID ?? "none")")
        }
        return (visits, events)
    }

    @Test("reports without fixes make a device-only visit; an unknown region is a 422 naming it, nothing written")
    func plainRoute() async throws {
        let fixture = try await ServiceFixture()
        defer { fixture.cleanUp() }
        try await fixture.app().test(.live) { client in
            let body = """
                [{"region":"home","kind":"enter","time":"\(Timestamp.format(seconds: Self.start))","accuracy":30},
                 {"region":"home","kind":"exit","time":\(Int(Self.start) + 600)}]
                """
            let response = try await client.execute(
                uri: "/v1/devices/phone/transitions", method: .post, headers: .bearer(fixture.phone),
                body: ByteBuffer(string: body))
            #expect(response.status == .ok, "\(response.text)")
            let answer = try #require(response.json)
            #expect(answer["accepted"]?.numberValue == 2)
            let events = answer["events"]?.arrayValue ?? []
            #expect(events.map { $0["flags"] } == [.array([.string("device")]), .array([.string("device")])])
            let visit = DeterministicID.visit(device: "phone", region: "home", enteredAt: Self.start)
            #expect(events.allSatisfy { $0["visit_id"]?.stringValue == visit })
            #expect(
                try await Self.contents(fixture.store, device: "phone").visits == [
                    "2025-06-15T15:06:40.000Z–2025-06-15T15:16:40.000Z exit"
                ])

            let before = try await fixture.counts()
            let unknown = try await client.execute(
                uri: "/v1/devices/phone/transitions", method: .post, headers: .bearer(fixture.phone),
                body: ByteBuffer(
                    string:
                        #"[{"region":"home","kind":"enter","time":\#(Int(Self.start) + 900)},{"region":"nowhere","kind":"exit","time":\#(Int(Self.start) + 960)}]"#
                ))
            #expect(unknown.status == .unprocessableContent)
            #expect(unknown.json?["error"]?["code"]?.stringValue == "unknown_region")
            #expect(unknown.json?["error"]?["message"]?.stringValue?.contains("nowhere") == true)
            #expect(try await fixture.counts() == before)

            let badKind = try await client.execute(
                uri: "/v1/devices/phone/transitions", method: .post, headers: .bearer(fixture.phone),
                body: ByteBuffer(string: #"{"region":"home","kind":"inside","time":1750000000}"#))
            #expect(badKind.status == .unprocessableContent)
            #expect(badKind.json?["error"]?["message"]?.stringValue?.hasPrefix("transition 0: kind must be") == true)

            let otherDevice = try await client.execute(
                uri: "/v1/devices/phone/transitions", method: .post, headers: .bearer(fixture.otherDevice),
                body: ByteBuffer(string: body))
            #expect(otherDevice.status == .forbidden)
            let metrics = try await client.execute(uri: "/metrics", method: .get).text
            #expect(
                OperationsTests.sample(metrics, #"fencepost_protocol_messages_refused_total{protocol="transitions"}"#)
                    == 2)
        }
    }

    @Test(
        "OwnTracks transitions merge with the fixes' events: one visit; a device exit closes it; an unknown waypoint is counted, not written"
    )
    func ownTracksTransitions() async throws {
        let fixture = try await ServiceFixture()
        defer { fixture.cleanUp() }
        try await fixture.app().test(.live) { client in
            var headers = HTTPFields.bearer(fixture.admin)
            headers[HTTPField.Name("X-Limit-U")!] = "alice"
            headers[HTTPField.Name("X-Limit-D")!] = "phone"
            // The first half of the walk: into home (about 300 s in), still inside at 360 s.
            let walk = ServiceFixture.walk()
            let fixes = try await client.execute(
                uri: "/v1/devices/alice%2Fphone/locations", method: .post, headers: .bearer(fixture.admin),
                body: ByteBuffer(string: ServiceFixture.batchBody(Array(walk[...6]))))
            #expect(fixes.status == .ok)
            // The phone's OS saw the enter 90 s after the fixes' crossing, and says it left at
            // 440 s, before the fixes show it.
            for (event, offset) in [("enter", 390), ("leave", 440)] {
                let transition = try await client.execute(
                    uri: "/owntracks", method: .post, headers: headers,
                    body: ByteBuffer(
                        string:
                            #"{"_type":"transition","event":"\#(event)","rid":"home","desc":"home","wtst":1,"tst":\#(Int(Self.start) + offset),"acc":10,"lat":47,"lon":8,"t":"c","tid":"ph"}"#
                    ))
                #expect(transition.status == .ok, "\(transition.text)")
            }
            let merged = try await Self.contents(fixture.store, device: "alice/phone")
            #expect(merged.visits.count == 1)
            #expect(merged.visits.first?.hasSuffix("–2025-06-15T15:14:00.000Z exit") == true)
            #expect(merged.events.count == 3)
            #expect(merged.events.filter { $0.contains("[device]") }.count == 2)
            #expect(Set(merged.events.map { $0.split(separator: " ").last ?? "" }).count == 1)

            let unknown = try await client.execute(
                uri: "/owntracks", method: .post, headers: headers,
                body: ByteBuffer(
                    string:
                        #"{"_type":"transition","event":"enter","desc":"Grandma's","wtst":12345,"tst":\#(Int(Self.start) + 900),"t":"c"}"#
                ))
            // Answered, so the app's queue goes on; counted, and nothing written.
            #expect(unknown.status == .ok, "\(unknown.text)")
            #expect(try await Self.contents(fixture.store, device: "alice/phone").events.count == 3)
            // Named by a wtst no integer holds: the same, not a trap converting it.
            let huge = try await client.execute(
                uri: "/owntracks", method: .post, headers: headers,
                body: ByteBuffer(
                    string:
                        #"{"_type":"transition","event":"leave","wtst":1e300,"tst":\#(Int(Self.start) + 960),"t":"c"}"#
                ))
            #expect(huge.status == .ok, "\(huge.text)")
            let metrics = try await client.execute(uri: "/metrics", method: .get).text
            #expect(
                OperationsTests.sample(
                    metrics, #"fencepost_protocol_messages_total{protocol="owntracks_http",type="transition_refused"}"#)
                    == 2)
        }
    }

    @Test(
        "transition_window_seconds in the config: a late enter past it is a stay of its own; a bad value is refused, located"
    )
    func configuredWindow() async throws {
        let fixture = try await ServiceFixture()
        defer { fixture.cleanUp() }
        let file = try TemporaryFile(#"{"transition_window_seconds": 60}"#, suffix: ".json")
        defer { file.remove() }
        try await fixture.app(try ServiceConfiguration.load(path: file.path)).test(.live) { client in
            // The fixes' stay in home is about 300–420 s; the OS reports an enter at 500 s.
            let fixes = try await client.execute(
                uri: "/v1/devices/phone/locations", method: .post, headers: .bearer(fixture.phone),
                body: ByteBuffer(string: ServiceFixture.batchBody(ServiceFixture.walk())))
            #expect(fixes.status == .ok)
            let late = try await client.execute(
                uri: "/v1/devices/phone/transitions", method: .post, headers: .bearer(fixture.phone),
                body: ByteBuffer(string: #"{"region":"home","kind":"enter","time":\#(Int(Self.start) + 500)}"#))
            #expect(late.status == .ok)
        }
        let visits = try await Self.contents(fixture.store, device: "phone").visits
        #expect(visits.count == 2, "with the default 300 s it would join the fixes' visit: \(visits)")
        #expect(visits.last == "2025-06-15T15:15:00.000Z–open ")

        let bad = try TemporaryFile(#"{"transition_window_seconds": -5}"#, suffix: ".json")
        defer { bad.remove() }
        #expect {
            _ = try ServiceConfiguration.load(path: bad.path)
        } throws: { error in
            "\(error)".contains("transition_window_seconds")
        }
    }
}
