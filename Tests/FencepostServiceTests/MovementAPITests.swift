import FencepostCore
import FencepostServerTestSupport
import FencepostService
import FencepostStore
import Foundation
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

/// `GET /v1/stops`, `GET /v1/trips` and `GET /v1/summary`: stops found from posted fixes,
/// brought up to date by the read itself, read as each token may.
@Suite("Stops and trips API")
struct MovementAPITests {
    @Test("Posted fixes become stops and trips; a device token reads its own only")
    func stopsAndTripsOverHTTP() async throws {
        let fixture = try await ServiceFixture()
        defer { fixture.cleanUp() }
        try await fixture.store.applyRegions([
            try ServiceFixture.region(
                id: "home", lat: ServiceFixture.home.lat, lon: ServiceFixture.home.lon, radius: 100)
        ])
        // 15 minutes at home, a fix a minute, then the walk away (north, 100 m a minute), then
        // 15 minutes where the walk ends.
        let start = 1_750_000_000.0
        let home = (0...15).map { (start + Double($0) * 60, ServiceFixture.home.lat, ServiceFixture.home.lon) }
        let walk = (1...12).map {
            (start + 900 + Double($0) * 60, ServiceFixture.home.lat + Double($0) * 0.0009, ServiceFixture.home.lon)
        }
        let end = walk.last!
        let there = (1...15).map { (end.0 + Double($0) * 60, end.1, end.2) }
        try await fixture.app().test(.router) { client in
            let posted = try await client.execute(
                uri: "/v1/devices/phone/locations", method: .post, headers: .bearer(fixture.phone),
                body: ByteBuffer(string: ServiceFixture.batchBody(home + walk + there)))
            #expect(posted.status == .ok)

            let stops = try await client.execute(
                uri: "/v1/stops?device=phone", method: .get, headers: .bearer(fixture.phone))
            #expect(stops.status == .ok)
            let list = try JSONParser.parse(Array(stops.body.readableBytesView)).arrayValue ?? []
            #expect(list.count == 2, "home and where the walk ended: \(String(buffer: stops.body))")
            #expect(list.first?["status"] == .string("closed") && list.last?["status"] == .string("open"))

            let trips = try await client.execute(
                uri: "/v1/trips?format=jsonl", method: .get, headers: .bearer(fixture.reader))
            #expect(trips.status == .ok)
            let trip = try JSONParser.parse(Array(String(buffer: trips.body).split(separator: "\n")[0].utf8))
            #expect(trip["regions"] == .array([.string("home")]), "left home on the way: \(String(buffer: trips.body))")
            let metres = try #require(trip["distance_m"]?.numberValue)
            #expect(metres > 900 && metres < 1300)

            let summary = try await client.execute(
                uri: "/v1/summary?by=day&tz=Europe/Zurich", method: .get, headers: .bearer(fixture.reader))
            let rows = try JSONParser.parse(Array(summary.body.readableBytesView)).arrayValue ?? []
            let home = rows.first { $0["subject"] == .string("home") }
            let moving = rows.first { $0["subject"] == nil }
            #expect(home?["visits"] == .number(1), "\(String(buffer: summary.body))")
            #expect(moving?["distance_m"] != nil && moving?["moving_s"] != nil)
            let csv = try await client.execute(
                uri: "/v1/summary?format=csv&by=week", method: .get, headers: .bearer(fixture.reader))
            #expect(String(buffer: csv.body).hasPrefix("period,device,subject,time_inside_s,"))

            let ics = try await client.execute(
                uri: "/v1/stops?format=ics", method: .get, headers: .bearer(fixture.reader))
            #expect(String(buffer: ics.body).hasPrefix("BEGIN:VCALENDAR"))
            for (uri, token, status) in [
                ("/v1/stops?device=phone", fixture.otherDevice, HTTPResponse.Status.forbidden),
                ("/v1/trips?format=ics", fixture.reader, .badRequest),
                ("/v1/stops?since=yesterday", fixture.reader, .badRequest),
                ("/v1/summary?by=year", fixture.reader, .badRequest),
                ("/v1/summary?tz=Mars/Olympus", fixture.reader, .badRequest),
                ("/v1/summary?device=phone", fixture.otherDevice, .forbidden),
            ] {
                let response = try await client.execute(uri: uri, method: .get, headers: .bearer(token))
                #expect(response.status == status, "\(uri)")
            }
        }
    }
}
