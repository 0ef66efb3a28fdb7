import FencepostCore
import FencepostGeometry
import FencepostService
import FencepostStore
import FencepostTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

@Suite("A phone's monitored set over HTTP")
struct MonitoredSetAPITests {
    /// The fixture's home plus 30 circles of 50 m every 200 m east of it.
    static func withRow(_ fixture: ServiceFixture) async throws {
        var regions = [try ServiceFixture.region(id: "home", lat: 47.0, lon: 8.0, radius: 100)]
        for index in 1...30 {
            let lon = 8.0 + Double(index) * 200 / Geodesy.metresPerDegreeLongitude(atLatitude: 47)
            regions.append(try ServiceFixture.region(id: "r\(index)", lat: 47.0, lon: lon, radius: 50))
        }
        try await fixture.store.applyRegions(regions)
    }

    static func ids(_ value: JSONValue?) -> [String] {
        value?.arrayValue?.compactMap(\.stringValue) ?? []
    }

    @Test(
        "the nearest regions and a re-plan circle within the budget; the diff from what the phone has; stable under small moves"
    )
    func planAndDiff() async throws {
        let fixture = try await ServiceFixture()
        defer { fixture.cleanUp() }
        try await Self.withRow(fixture)
        try await fixture.app().test(.router) { client in
            let first = try await client.execute(
                uri: "/v1/devices/phone/monitored-set?lat=47.0&lon=8.0&budget=5", method: .get,
                headers: .bearer(fixture.phone))
            #expect(first.status == .ok)
            let plan = try #require(first.json)
            let regions = plan["regions"]?.arrayValue ?? []
            #expect(regions.compactMap { $0["id"]?.stringValue } == ["home", "r1", "r2", "r3"])
            #expect(regions.first?["distance"]?.numberValue == -100, "inside home: 100 m from its edge")
            #expect(regions.first?["approximate"] == .bool(false))
            let replan = try #require(plan["replan"])
            // r4's edge is 750 m east: the re-plan circle reaches to it, not into it.
            #expect(replan["radius"]?.numberValue == 749 || replan["radius"]?.numberValue == 750)
            let replanID = try #require(replan["id"]?.stringValue)
            #expect(Self.ids(plan["add"]) == ["home", "r1", "r2", "r3", replanID].sorted())
            #expect(Self.ids(plan["remove"]).isEmpty && Self.ids(plan["keep"]).isEmpty)

            // A few metres on, with what the phone now monitors (and one stale region): only
            // the stale one goes.
            let have = (Self.ids(plan["add"]) + ["gone"]).joined(separator: ",")
            let moved = try await client.execute(
                uri: "/v1/devices/phone/monitored-set?lat=47.00003&lon=8.00004&budget=5&have=\(have)", method: .get,
                headers: .bearer(fixture.phone))
            let added = Self.ids(moved.json?["add"])
            #expect(added.isEmpty)
            #expect(Self.ids(moved.json?["remove"]) == ["gone"])
            #expect(Self.ids(moved.json?["keep"]) == Self.ids(plan["add"]))

            // Past the re-plan circle's edge (900 m east): a new set, and a new re-plan circle.
            let far = try await client.execute(
                uri: "/v1/devices/phone/monitored-set", method: .post, headers: .bearer(fixture.phone),
                body: ByteBuffer(
                    string:
                        #"{"lat":47.0,"lon":\#(8.0 + 900 / Geodesy.metresPerDegreeLongitude(atLatitude: 47)),"budget":5,"have":\#(JSONValue.array(Self.ids(plan["add"]).map(JSONValue.string)).canonicalText())}"#
                ))
            #expect(far.status == .ok)
            let removed = Self.ids(far.json?["remove"])
            #expect(removed.contains(replanID) && removed.contains("home"))
            // r4 and r5 are 50 m away, r3 and r6 250 m, r2 450 m: held, r2 counts 200 m nearer
            // and keeps its slot over r6.
            #expect(far.json?["regions"]?.arrayValue?.compactMap { $0["id"]?.stringValue } == ["r4", "r5", "r3", "r2"])
        }
    }

    @Test("the device's last fix stands in for lat/lon; a platform's budget; who may ask")
    func lastFixPlatformAndScope() async throws {
        let fixture = try await ServiceFixture()
        defer { fixture.cleanUp() }
        try await Self.withRow(fixture)
        try await fixture.app().test(.router) { client in
            let none = try await client.execute(
                uri: "/v1/devices/phone/monitored-set", method: .get, headers: .bearer(fixture.phone))
            #expect(none.status == .badRequest)
            #expect(none.json?["error"]?["message"]?.stringValue?.contains("no fix yet") == true)

            _ = try await client.execute(
                uri: "/v1/devices/phone/locations", method: .post, headers: .bearer(fixture.phone),
                body: ByteBuffer(string: ServiceFixture.batchBody([(1_750_000_000, 47.0, 8.0)])))
            let android = try await client.execute(
                uri: "/v1/devices/phone/monitored-set?platform=android", method: .get, headers: .bearer(fixture.phone))
            #expect(android.status == .ok)
            #expect(android.json?["regions"]?.arrayValue?.count == 31, "all 31 fit Android's 100")
            #expect(android.json?["replan"] == .null)
            let ios = try await client.execute(
                uri: "/v1/devices/phone/monitored-set?platform=ios", method: .get, headers: .bearer(fixture.phone))
            #expect(ios.json?["regions"]?.arrayValue?.count == 19)

            let other = try await client.execute(
                uri: "/v1/devices/phone/monitored-set?lat=47&lon=8", method: .get, headers: .bearer(fixture.otherDevice)
            )
            #expect(other.status == .forbidden)
            for bad in [
                "lat=47&lon=8&budget=1", "lat=47&lon=8&budget=x", "lat=47&lon=8&platform=symbian", "lat=91&lon=8",
            ] {
                let response = try await client.execute(
                    uri: "/v1/devices/phone/monitored-set?\(bad)", method: .get, headers: .bearer(fixture.admin))
                #expect(response.status == .badRequest, "\(bad)")
            }
        }
    }
}
