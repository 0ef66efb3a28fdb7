import FencepostCore
import FencepostServerTestSupport
import FencepostService
import FencepostStore
import FencepostTestSupport
import Foundation
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

/// `GET /v1/devices/{id}/track`: the fixes the service was posted, kept in the same
/// transaction as their events, read back through the real server on 127.0.0.1.
@Suite struct TrackAPITests {
    @Test func postedFixesAreKeptAndReadBackInEveryFormat() async throws {
        let fixture = try await ServiceFixture()
        defer { fixture.cleanUp() }
        try await fixture.store.applyRoster(
            DeviceRoster([.init(device: "phone", groups: ["alpha"]), .init(device: "b1", groups: ["beta"])]))
        let alpha = try await fixture.store.createToken(name: "alpha", scope: .group("alpha", readOnly: true))
        let walk = ServiceFixture.walk()
        try await fixture.app().test(.live) { client in
            // A batch post, then one fix by the OsmAnd protocol, a minute after the walk.
            let posted = try await client.execute(
                uri: "/v1/devices/phone/locations", method: .post, headers: .bearer(fixture.phone),
                body: ByteBuffer(string: ServiceFixture.batchBody(walk)))
            #expect(posted.status == .ok)
            let last = walk.last!
            let osmand = try await client.execute(
                uri:
                    "/osmand?id=phone&lat=\(last.lat + 0.001)&lon=\(last.lon)&timestamp=\(Int(last.time) + 60)&accuracy=5&token=\(fixture.phone)",
                method: .get)
            #expect(osmand.status == .ok)

            let csv = try await client.execute(
                uri: "/v1/devices/phone/track?format=csv", method: .get, headers: .bearer(fixture.reader))
            #expect(csv.status == .ok)
            #expect(csv.headers[.contentType]?.hasPrefix("text/csv") == true)
            let rows = csv.text.split(separator: "\n").dropFirst().map {
                $0.split(separator: ",", omittingEmptySubsequences: false)
            }
            #expect(rows.count == walk.count + 1)
            #expect(
                rows.map { String($0[1]) }
                    == (walk.map(\.time) + [last.time + 60]).map { Timestamp.format(seconds: $0) })
            #expect(rows.allSatisfy { $0[0] == "phone" && $0[4] == "5" })

            // The same fixes as GeoJSON (the default) and GPX; a window with both ends included.
            let geojson = try await client.execute(
                uri:
                    "/v1/devices/phone/track?since=\(Timestamp.format(seconds: walk[2].time))&until=\(Timestamp.format(seconds: walk[4].time))",
                method: .get, headers: .bearer(fixture.phone))
            #expect(geojson.status == .ok)
            #expect(geojson.json?["features"]?.arrayValue?.count == 3)
            let gpx = try await client.execute(
                uri: "/v1/devices/phone/track?format=gpx", method: .get, headers: .bearer(alpha))
            #expect(gpx.status == .ok)
            #expect(gpx.text.components(separatedBy: "<trkpt ").count - 1 == walk.count + 1)

            // Refusals: another device's token, a group's token for a device outside it, bad
            // input, a device with nothing stored.
            for (uri, token, status) in [
                ("/v1/devices/phone/track", fixture.otherDevice, 403), ("/v1/devices/b1/track", alpha, 403),
                ("/v1/devices/phone/track?format=kml", fixture.reader, 400),
                ("/v1/devices/phone/track?since=yesterday", fixture.reader, 400),
                ("/v1/devices/nobody/track", fixture.reader, 404), ("/v1/devices/phone/track", "wrong", 401),
            ] {
                let response = try await client.execute(uri: uri, method: .get, headers: .bearer(token))
                #expect(Int(response.status.code) == status, "\(uri)")
                #expect(response.json?["error"]?["message"]?.stringValue != nil, "\(uri)")
            }
        }
        // Kept in the store with the events they made.
        var events = 0
        try await fixture.store.forEachEvent(EventQuery(device: "phone")) { _ in events += 1 }
        #expect(events == 2)
        #expect(try await fixture.store.historyStats(device: "phone").fixes == walk.count + 1)
    }
}
