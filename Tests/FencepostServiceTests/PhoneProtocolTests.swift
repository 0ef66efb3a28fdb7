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

/// The apps and servers that post locations as they are: Traccar Client's JSON, Overland, a
/// Traccar server forwarding positions, OwnTracks' other message types. Each payload is
/// written from the client's published format (the source is named at each builder), and the
/// walk through `home` they carry must give the events the same fixes give as our batch.
@Suite("Phone and upstream protocols")
struct PhoneProtocolTests {
    /// The walk as Traccar Client 9 sends it (transistorsoft's location object, which the app
    /// POSTs as `{"location": …, "device_id": …}`; field list as Traccar's own decoder for it
    /// reads it, traccar/traccar `OsmAndProtocolDecoder`): speeds in m/s, -1 for unknown.
    static func traccarClientLocation(_ fix: (time: Double, lat: Double, lon: Double), index: Int) -> String {
        #"{"timestamp":"\#(Timestamp.format(seconds: fix.time))","uuid":"5e1f\#(index)","age":41,"#
            + #""coords":{"latitude":\#(fix.lat),"longitude":\#(fix.lon),"accuracy":5,"speed":1.5,"heading":-1,"#
            + #""altitude":431.2,"ellipsoidal_altitude":479.9,"altitude_accuracy":3.1,"speed_accuracy":-1},"#
            + #""is_moving":true,"odometer":\#(index * 100),"event":"motionchange","#
            + #""battery":{"level":0.62,"is_charging":false},"activity":{"type":"walking","confidence":100},"extras":{}}"#
    }

    /// The walk as one Overland batch (aaronpk/Overland-iOS README, "API"): GeoJSON Points
    /// with an ISO 8601 timestamp with a numeric offset, Core Location's -1 for unknowns.
    static func overlandBody(_ walk: [(time: Double, lat: Double, lon: Double)], device: String) -> String {
        let features = walk.map { fix in
            let local = Timestamp.format(seconds: fix.time - 7 * 3600).replacingOccurrences(of: "Z", with: "-0700")
            return #"{"type":"Feature","geometry":{"type":"Point","coordinates":[\#(fix.lon),\#(fix.lat)]},"#
                + #""properties":{"timestamp":"\#(local)","altitude":0,"speed":-1,"horizontal_accuracy":5,"#
                + #""vertical_accuracy":-1,"motion":["walking"],"pauses":false,"activity":"other_navigation","#
                + #""desired_accuracy":100,"deferred":1000,"significant_change":"disabled","#
                + #""locations_in_payload":\#(walk.count),"battery_state":"unplugged","battery_level":0.89,"#
                + #""device_id":"\#(device)","wifi":""}}"#
        }
        return #"{"locations":["# + features.joined(separator: ",") + #"],"current":{"type":"Feature"}}"#
    }

    /// One position as a Traccar server forwards it with `forward.type` `json` (the shape of
    /// Traccar's Position and Device models in its API documentation): speed in knots,
    /// accuracy 0 when the tracker reports none (a phone reports its own).
    static func traccarForwardBody(
        _ fix: (time: Double, lat: Double, lon: Double), uniqueID: String, valid: Bool = true
    ) -> String {
        let time = Timestamp.format(seconds: fix.time).replacingOccurrences(of: "Z", with: "+00:00")
        return #"{"position":{"id":7,"attributes":{"batteryLevel":85,"distance":15.4,"motion":true},"deviceId":3,"#
            + #""protocol":"gt06","serverTime":"\#(time)","deviceTime":"\#(time)","fixTime":"\#(time)","#
            + #""outdated":false,"valid":\#(valid),"latitude":\#(fix.lat),"longitude":\#(fix.lon),"altitude":430.0,"#
            + #""speed":2.9,"course":0.0,"address":null,"accuracy":5.0,"network":null,"geofenceIds":null},"#
            + #""device":{"id":3,"name":"Van 7","uniqueId":"\#(uniqueID)","status":"online","groupId":0,"disabled":false}}"#
    }

    @Test("Traccar Client JSON (single and batch), Overland and Traccar forwarding give the events of the same batch")
    func sameEventsAsBatch() async throws {
        let fixture = try await ServiceFixture()
        defer { fixture.cleanUp() }
        let walk = ServiceFixture.walk()
        try await fixture.app().test(.router) { client in
            let batch = try await client.execute(
                uri: "/v1/devices/phone/locations", method: .post, headers: .bearer(fixture.admin),
                body: ByteBuffer(string: ServiceFixture.batchBody(walk)))
            #expect(batch.status == .ok)

            for (index, fix) in walk.enumerated() {
                let body = #"{"location":\#(Self.traccarClientLocation(fix, index: index)),"device_id":"tc"}"#
                // Traccar Client sends its token nowhere but the URL.
                let response = try await client.execute(
                    uri: "/osmand?token=\(fixture.admin)", method: .post, headers: [.contentType: "application/json"],
                    body: ByteBuffer(string: body))
                #expect(response.status == .ok)
            }
            let locations = walk.enumerated().map { Self.traccarClientLocation($1, index: $0) }
            let batched = try await client.execute(
                uri: "/osmand?token=\(fixture.admin)", method: .post,
                body: ByteBuffer(string: #"{"device_id":4711,"location":[\#(locations.joined(separator: ","))]}"#))
            #expect(batched.status == .ok, "batch mode, no content type, a numeric device id")

            let overland = try await client.execute(
                uri: "/overland", method: .post, headers: .bearer(fixture.admin),
                body: ByteBuffer(string: Self.overlandBody(walk, device: "ov")))
            #expect(overland.status == .ok)
            #expect(overland.json == .object(["result": .string("ok")]))

            for fix in walk {
                let response = try await client.execute(
                    uri: "/traccar?token=\(fixture.admin)", method: .post,
                    body: ByteBuffer(string: Self.traccarForwardBody(fix, uniqueID: "862531040000001")))
                #expect(response.status == .ok)
            }
            // A position Traccar marks invalid repeats old coordinates: counted, not ingested.
            let invalid = try await client.execute(
                uri: "/traccar?token=\(fixture.admin)", method: .post,
                body: ByteBuffer(string: Self.traccarForwardBody(walk[0], uniqueID: "862531040000002", valid: false)))
            #expect(invalid.status == .ok)

            let metrics = try await client.execute(uri: "/metrics", method: .get).text
            func sample(_ series: String) -> Double? { OperationsTests.sample(metrics, series) }
            #expect(sample(#"fencepost_protocol_messages_total{protocol="traccar_client",type="location"}"#) == 26)
            #expect(sample(#"fencepost_protocol_messages_total{protocol="overland",type="location"}"#) == 13)
            #expect(sample(#"fencepost_protocol_messages_total{protocol="traccar",type="location"}"#) == 13)
            #expect(sample(#"fencepost_protocol_messages_total{protocol="traccar",type="invalid"}"#) == 1)
            #expect(sample(#"fencepost_protocol_messages_total{protocol="batch",type="location"}"#) == 13)
            #expect(sample(#"fencepost_protocol_extras_total{protocol="traccar_client",extra="battery"}"#) == 26)
            #expect(sample(#"fencepost_protocol_extras_total{protocol="overland",extra="motion"}"#) == 13)
        }
        let expected = try await Self.events(of: "phone", in: fixture.store)
        #expect(expected.count == 2)
        for device in ["tc", "4711", "ov", "862531040000001"] {
            #expect(try await Self.events(of: device, in: fixture.store) == expected, "device \(device)")
        }
        #expect(try await Self.events(of: "862531040000002", in: fixture.store).isEmpty)
    }

    /// Traccar Client on Android with a mock location provider (`"mock": true`, transistorsoft's
    /// flag from `Location.isMock()`): the walk's first five positions (600 to 200 m south of
    /// `home`) are real, the rest, through `home` and beyond, mocked. The mocked ones are
    /// counted and never ingested: no visit rests on them.
    @Test("mocked positions are counted and not ingested")
    func mockedPositions() async throws {
        let fixture = try await ServiceFixture()
        defer { fixture.cleanUp() }
        let walk = ServiceFixture.walk()
        let locations = walk.enumerated().map { index, fix in
            let location = Self.traccarClientLocation(fix, index: index)
            return index >= 5 ? String(location.dropLast()) + #","mock":true}"# : location
        }
        try await fixture.app().test(.router) { client in
            let answer = try await client.execute(
                uri: "/osmand?token=\(fixture.admin)", method: .post,
                body: ByteBuffer(string: #"{"device_id":"mocker","location":[\#(locations.joined(separator: ","))]}"#))
            #expect(answer.status == .ok)
            let metrics = try await client.execute(uri: "/metrics", method: .get).text
            let mocked = OperationsTests.sample(
                metrics, #"fencepost_protocol_messages_total{protocol="traccar_client",type="mocked"}"#)
            let real = OperationsTests.sample(
                metrics, #"fencepost_protocol_messages_total{protocol="traccar_client",type="location"}"#)
            #expect(mocked == 8 && real == 5)
        }
        #expect(try await Self.events(of: "mocker", in: fixture.store).isEmpty)
    }

    @Test("a body that is JSON but not the protocol's shape is a 400 naming what is missing; nothing is written")
    func malformedBodies() async throws {
        let fixture = try await ServiceFixture()
        defer { fixture.cleanUp() }
        let fix = ServiceFixture.walk()[0]
        let location = Self.traccarClientLocation(fix, index: 0)
        let cases: [(uri: String, body: String, status: HTTPResponse.Status, names: String)] = [
            ("/osmand", #"{"location":\#(location)}"#, .badRequest, "device_id"),
            ("/osmand", #"{"device_id":"tc"}"#, .badRequest, "location is missing"),
            ("/osmand", #"{"device_id":"tc","location":{"timestamp":"2025-06-15T15:06:40Z"}}"#, .badRequest, "coords"),
            (
                "/osmand",
                #"{"device_id":"tc","location":{"timestamp":"2025-06-15T15:06:40Z","coords":{"latitude":47}}}"#,
                .badRequest, "coords.longitude"
            ),
            (
                "/osmand",
                #"{"device_id":"tc","location":[\#(location),{"timestamp":"x","coords":{"latitude":47,"longitude":8}}]}"#,
                .unprocessableContent, "fix 1: timestamp"
            ),
            ("/overland", #"{"locations":{}}"#, .badRequest, "locations"),
            ("/overland", Self.overlandBody([fix], device: ""), .badRequest, "device_id is empty"),
            ("/traccar", #"{"position":{"latitude":47,"longitude":8}}"#, .badRequest, "uniqueId"),
            ("/traccar", #"{"position":{"latitude":47},"device":{"uniqueId":"x"}}"#, .badRequest, "fixTime"),
        ]
        try await fixture.app().test(.router) { client in
            for (uri, body, status, names) in cases {
                let response = try await client.execute(
                    uri: uri + "?token=\(fixture.admin)", method: .post, headers: [.contentType: "application/json"],
                    body: ByteBuffer(string: body))
                #expect(response.status == status, "\(uri) \(body)")
                let message = response.json?["error"]?["message"]?.stringValue ?? ""
                #expect(message.contains(names), "\(message)")
                #expect(!message.contains("id (the device) is missing"))
            }
            // OsmAnd's form parameters still work on the same path.
            let form = try await client.execute(
                uri: "/osmand?token=\(fixture.admin)", method: .post,
                headers: [.contentType: "application/x-www-form-urlencoded"],
                body: ByteBuffer(string: "id=form&lat=\(fix.lat)&lon=\(fix.lon)&timestamp=\(Int(fix.time))"))
            #expect(form.status == .ok)

            let metrics = try await client.execute(uri: "/metrics", method: .get).text
            func refused(_ name: String) -> Double? {
                OperationsTests.sample(metrics, #"fencepost_protocol_messages_refused_total{protocol="\#(name)"}"#)
            }
            #expect(refused("traccar_client") == 5)
            #expect(refused("overland") == 2)
            #expect(refused("traccar") == 2)
        }
        #expect(try await fixture.counts().devices == 1, "only the form's device")
    }

    @Test("Overland without a Device ID: the request's device parameter, else a device token's device")
    func overlandFallbackDevice() async throws {
        let fixture = try await ServiceFixture()
        defer { fixture.cleanUp() }
        let walk = ServiceFixture.walk()
        try await fixture.app().test(.router) { client in
            let named = try await client.execute(
                uri: "/overland?device=named&token=\(fixture.admin)", method: .post,
                body: ByteBuffer(string: Self.overlandBody(walk, device: "")))
            #expect(named.status == .ok)
            let token = try await client.execute(
                uri: "/overland", method: .post, headers: .bearer(fixture.phone),
                body: ByteBuffer(string: Self.overlandBody(walk, device: "")))
            #expect(token.status == .ok)
            // A device token posts for its own device only.
            let other = try await client.execute(
                uri: "/overland", method: .post, headers: .bearer(fixture.phone),
                body: ByteBuffer(string: Self.overlandBody(walk, device: "other")))
            #expect(other.status == .forbidden)
        }
        #expect(try await Self.events(of: "named", in: fixture.store).count == 2)
        #expect(try await Self.events(of: "phone", in: fixture.store).count == 2)
        #expect(try await Self.events(of: "other", in: fixture.store).isEmpty)
    }

    @Test("OwnTracks' other message types are accepted and counted by type, over HTTP")
    func ownTracksTypes() async throws {
        let fixture = try await ServiceFixture()
        defer { fixture.cleanUp() }
        let fix = ServiceFixture.walk()[0]
        // From the OwnTracks booklet's JSON page: a location, a transition the phone saw
        // itself, its waypoints, a last will, a card, and a type nobody documents.
        let payload =
            #"[{"_type":"location","lat":\#(fix.lat),"lon":\#(fix.lon),"tst":\#(Int(fix.time)),"acc":5,"batt":80,"tid":"ph"},"#
            + #"{"_type":"transition","wtst":1750000000,"lat":47,"lon":8,"tst":\#(Int(fix.time)),"acc":5,"tid":"ph","event":"enter","desc":"home","t":"c"},"#
            + #"{"_type":"waypoints","waypoints":[{"_type":"waypoint","desc":"home","lat":47,"lon":8,"rad":100,"tst":1750000000}]},"#
            + #"{"_type":"lwt","tst":1750000000},{"_type":"card","name":"Alice"},{"_type":"made-up"}]"#
        try await fixture.app().test(.router) { client in
            var headers = HTTPFields.bearer(fixture.admin)
            headers[HTTPField.Name("X-Limit-U")!] = "alice"
            headers[HTTPField.Name("X-Limit-D")!] = "phone"
            let response = try await client.execute(
                uri: "/owntracks", method: .post, headers: headers, body: ByteBuffer(string: payload))
            #expect(response.status == .ok)
            let metrics = try await client.execute(uri: "/metrics", method: .get).text
            for (type, count) in [
                ("location", 1.0), ("transition", 1), ("waypoints", 1), ("lwt", 1), ("card", 1), ("other", 1),
            ] {
                #expect(
                    OperationsTests.sample(
                        metrics, #"fencepost_protocol_messages_total{protocol="owntracks_http",type="\#(type)"}"#)
                        == count, "\(type)")
            }
        }
        #expect(try await fixture.counts().devices == 1)
    }

    @Test("an OwnTracks location is answered with setWaypoints of at most 20 waypoints; from the same place again, []")
    func ownTracksWaypoints() async throws {
        let fixture = try await ServiceFixture()
        defer { fixture.cleanUp() }
        try await MonitoredSetAPITests.withRow(fixture)
        try await fixture.app().test(.router) { client in
            let answer = try await Self.postOwnTracks(
                client, token: fixture.admin, lat: 47.0, lon: 8.0, time: 1_750_000_000)
            let first = try #require(answer?.arrayValue)
            #expect(first.count == 1)
            let command = try #require(first.first)
            #expect(command["_type"]?.stringValue == "cmd" && command["action"]?.stringValue == "setWaypoints")
            let waypoints = command["waypoints"]?["waypoints"]?.arrayValue ?? []
            #expect(waypoints.count == 20, "19 regions and the re-plan circle")
            let home = try #require(waypoints.first { $0["rid"]?.stringValue == "home" })
            #expect(
                home["rad"]?.numberValue == 100 && home["lat"]?.numberValue == 47
                    && home["_type"]?.stringValue == "waypoint")
            #expect(waypoints.contains { $0["rid"]?.stringValue == "fencepost:replan" })
            // The same place a minute later: nothing to change.
            let again = try await Self.postOwnTracks(
                client, token: fixture.admin, lat: 47.0, lon: 8.0, time: 1_750_000_060)
            #expect(again == .array([]))
        }
        var off = ServiceConfiguration()
        off.ownTracksWaypoints = false
        try await fixture.app(off).test(.router) { client in
            let answer = try await Self.postOwnTracks(
                client, token: fixture.admin, lat: 47.0, lon: 8.01, time: 1_750_000_120)
            #expect(answer == .array([]))
        }
    }

    /// An OwnTracks location of alice/phone; the answer.
    static func postOwnTracks(_ client: some TestClientProtocol, token: String, lat: Double, lon: Double, time: Int)
        async throws -> JSONValue?
    {
        var headers = HTTPFields.bearer(token)
        headers[HTTPField.Name("X-Limit-U")!] = "alice"
        headers[HTTPField.Name("X-Limit-D")!] = "phone"
        let body = #"{"_type":"location","lat":\#(lat),"lon":\#(lon),"tst":\#(time),"acc":5,"tid":"ph"}"#
        let response = try await client.execute(
            uri: "/owntracks", method: .post, headers: headers, body: ByteBuffer(string: body))
        #expect(response.status == .ok)
        return response.json
    }

    /// A device's events as (kind, region, time, position, flags): what must not depend on
    /// the protocol the fixes came by.
    static func events(of device: String, in store: Store) async throws -> [String] {
        var events: [String] = []
        try await store.forEachEvent(EventQuery(device: device)) {
            events.append("\($0.kind) \($0.region ?? "-") \($0.time) \($0.lat ?? .nan) \($0.lon ?? .nan) \($0.flags)")
        }
        return events
    }
}
