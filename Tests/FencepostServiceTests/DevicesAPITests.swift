import FencepostCore
import FencepostServerTestSupport
import FencepostService
import FencepostStore
import Foundation
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

/// The roster over HTTP, and its groups deciding which regions a device's posted fixes meet.
@Suite("Devices API")
struct DevicesAPITests {
    @Test("PUT, GET and DELETE /v1/devices: admin only, checked as a roster file is, and the group decides the regions")
    func rosterOverHTTP() async throws {
        let fixture = try await ServiceFixture()
        defer { fixture.cleanUp() }
        // A second region in the same place, for the night shift only.
        var depot = try ServiceFixture.region(
            id: "depot", lat: ServiceFixture.home.lat, lon: ServiceFixture.home.lon, radius: 100)
        depot.audience = RegionAudience(groups: ["night-shift"])
        try await fixture.store.applyRegions([
            try ServiceFixture.region(
                id: "home", lat: ServiceFixture.home.lat, lon: ServiceFixture.home.lon, radius: 100),
            depot,
        ])
        try await fixture.app().test(.router) { client in
            func put(_ id: String, _ body: String, token: String) async throws -> (UInt, String) {
                let response = try await client.execute(
                    uri: "/v1/devices/\(id)", method: .put, headers: .bearer(token), body: ByteBuffer(string: body))
                return (UInt(response.status.code), String(buffer: response.body))
            }
            #expect(try await put("phone", #"{"groups":["night-shift"]}"#, token: fixture.reader).0 == 403)
            let created = try await put(
                "phone", #"{"name":"Ann's phone","groups":["night-shift"]}"#, token: fixture.admin)
            #expect(
                created.0 == 201
                    && created.1 == #"{"device":"phone","groups":["night-shift"],"name":"Ann's phone"}"# + "\n")
            #expect(
                try await put("phone", #"{"name":"Ann's phone","groups":["night-shift"]}"#, token: fixture.admin).0
                    == 200)
            #expect(try await put("other", #"{"groups":[""]}"#, token: fixture.admin).0 == 422)
            #expect(try await put("other", #"["not an object"]"#, token: fixture.admin).0 == 400)
            #expect(try await put("other", #"{"device":"phone"}"#, token: fixture.admin).0 == 400)
            let listed = try await client.execute(uri: "/v1/devices", method: .get, headers: .bearer(fixture.reader))
            #expect(
                String(buffer: listed.body) == #"[{"device":"phone","groups":["night-shift"],"name":"Ann's phone"}]"#
                    + "\n")

            // Through both circles: the phone (night shift) meets both, the other device only home.
            for (device, token) in [("phone", fixture.phone), ("other", fixture.otherDevice)] {
                let posted = try await client.execute(
                    uri: "/v1/devices/\(device)/locations", method: .post, headers: .bearer(token),
                    body: ByteBuffer(string: ServiceFixture.batchBody(ServiceFixture.walk())))
                #expect(posted.status == .ok)
            }
            var regions: [String: [String]] = [:]
            try await fixture.store.forEachEvent(EventQuery()) {
                regions[$0.device, default: []].append($0.region ?? "")
            }
            #expect(
                regions.mapValues { $0.sorted() } == [
                    "phone": ["depot", "depot", "home", "home"], "other": ["home", "home"],
                ])

            let deleted = try await client.execute(
                uri: "/v1/devices/phone", method: .delete, headers: .bearer(fixture.admin))
            #expect(deleted.status == .noContent)
            let again = try await client.execute(
                uri: "/v1/devices/phone", method: .delete, headers: .bearer(fixture.admin))
            #expect(again.status == .notFound)
        }
        #expect(try await fixture.store.roster().entries.isEmpty)
    }

    @Test("DELETE /v1/devices/{id}?erase=true erases the device's rows and queues deletes; others keep theirs")
    func eraseOverHTTP() async throws {
        let fixture = try await ServiceFixture()
        defer { fixture.cleanUp() }
        try await fixture.store.applyRegions([
            try ServiceFixture.region(
                id: "home", lat: ServiceFixture.home.lat, lon: ServiceFixture.home.lon, radius: 100)
        ])
        try await fixture.app().test(.router) { client in
            for (device, token) in [("phone", fixture.phone), ("other", fixture.otherDevice)] {
                let posted = try await client.execute(
                    uri: "/v1/devices/\(device)/locations", method: .post, headers: .bearer(token),
                    body: ByteBuffer(string: ServiceFixture.batchBody(ServiceFixture.walk())))
                #expect(posted.status == .ok)
            }
            let refused = try await client.execute(
                uri: "/v1/devices/phone?erase=true", method: .delete, headers: .bearer(fixture.reader))
            #expect(refused.status == .forbidden)
            let bad = try await client.execute(
                uri: "/v1/devices/phone?erase=maybe", method: .delete, headers: .bearer(fixture.admin))
            #expect(bad.status == .badRequest)

            let erased = try await client.execute(
                uri: "/v1/devices/phone?erase=true", method: .delete, headers: .bearer(fixture.admin))
            #expect(erased.status == .ok)
            let answer = try JSONParser.parse(Array(erased.body.readableBytesView))
            #expect(answer["removed"]?["events"] == .number(2), "\(String(buffer: erased.body))")
            #expect(answer["removed"]?["visits"] == .number(1))
            #expect(answer["outbox_deletes"] == .number(3))
            let again = try await client.execute(
                uri: "/v1/devices/phone?erase=true", method: .delete, headers: .bearer(fixture.admin))
            #expect(again.status == .ok && String(buffer: again.body).contains(#""removed":{}"#))
        }
        var devices: [String] = []
        try await fixture.store.forEachEvent(EventQuery()) { devices.append($0.device) }
        #expect(devices == ["other", "other"])
    }
}
