import FencepostCore
import FencepostService
import FencepostStore
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

@Suite("Regions and events over HTTP")
struct RegionsAndEventsTests {
    @Test("PUT adds a region the next fixes use; DELETE closes its open visit (region_removed)")
    func putAndDelete() async throws {
        let fixture = try await ServiceFixture()
        defer { fixture.cleanUp() }
        try await fixture.app().test(.router) { client in
            let feature = ServiceFixture.circleFeature(id: "office", lat: 47.01, lon: 8.0, radius: 80)
            let put = try await client.execute(
                uri: "/v1/regions/office", method: .put, headers: .bearer(fixture.admin),
                body: ByteBuffer(string: feature))
            #expect(put.status == .created)
            #expect(put.json?["add"]?.numberValue == 1)
            let got = try await client.execute(
                uri: "/v1/regions/office", method: .get, headers: .bearer(fixture.reader))
            #expect(got.json?["properties"]?["radius"]?.numberValue == 80)

            // Stand in the office: an open visit.
            let fixes = (0..<5).map { (time: 1_750_000_000 + Double($0) * 30, lat: 47.01, lon: 8.0) }
            let posted = try await client.execute(
                uri: "/v1/devices/phone/locations", method: .post, headers: .bearer(fixture.phone),
                body: ByteBuffer(string: ServiceFixture.batchBody(fixes)))
            #expect(posted.json?["events"]?.arrayValue?.first?["region"]?.stringValue == "office")

            let deleted = try await client.execute(
                uri: "/v1/regions/office", method: .delete, headers: .bearer(fixture.admin))
            #expect(deleted.json?["remove"]?.numberValue == 1)
            let visits = try await client.execute(
                uri: "/v1/visits?device=phone", method: .get, headers: .bearer(fixture.admin))
            let visit = try #require(visits.json?["visits"]?.arrayValue?.first)
            #expect(visit["status"]?.stringValue == "closed")
            #expect(visit["exit_reason"]?.stringValue == "region_removed")
            #expect(
                try await client.execute(uri: "/v1/regions/office", method: .delete, headers: .bearer(fixture.admin))
                    .status == .notFound)
        }
    }

    @Test("PUT of a Feature without an id takes the path's; one whose id differs from the path's is refused")
    func putTakesTheIDFromThePath() async throws {
        let fixture = try await ServiceFixture()
        defer { fixture.cleanUp() }
        try await fixture.app().test(.router) { client in
            let feature =
                #"{"type":"Feature","geometry":{"type":"Point","coordinates":[8.0,47.01]},"properties":{"radius":80,"name":"Office"}}"#
            let put = try await client.execute(
                uri: "/v1/regions/office", method: .put, headers: .bearer(fixture.admin),
                body: ByteBuffer(string: feature))
            #expect(put.status == .created, "\(put.text)")
            let got = try await client.execute(
                uri: "/v1/regions/office", method: .get, headers: .bearer(fixture.reader))
            #expect(
                got.json?["properties"]?["id"]?.stringValue == "office"
                    && got.json?["properties"]?["name"]?.stringValue == "Office")
            // The same body again changes nothing: the stored feature is the one with the id.
            let again = try await client.execute(
                uri: "/v1/regions/office", method: .put, headers: .bearer(fixture.admin),
                body: ByteBuffer(string: feature))
            #expect(again.status == .ok && again.json?["unchanged"]?.numberValue == 2)

            let other = ServiceFixture.circleFeature(id: "elsewhere", lat: 47.01, lon: 8.0, radius: 80)
            let mismatch = try await client.execute(
                uri: "/v1/regions/office", method: .put, headers: .bearer(fixture.admin),
                body: ByteBuffer(string: other))
            #expect(mismatch.status == .badRequest)
            #expect(try await fixture.store.monitoredRegions().map(\.region.id).sorted() == ["home", "office"])
        }
    }

    @Test("a bad region config is refused whole with every problem, as the CLI reports them")
    func refusedPlan() async throws {
        let fixture = try await ServiceFixture()
        defer { fixture.cleanUp() }
        let body = #"""
            {"type":"FeatureCollection","features":[
              {"type":"Feature","id":"a","geometry":{"type":"Point","coordinates":[8,47]},"properties":{}},
              {"type":"Feature","id":"b","geometry":{"type":"Point","coordinates":[8,47]},"properties":{"radius":50}},
              {"type":"Feature","id":"b","geometry":{"type":"Point","coordinates":[8,47]},"properties":{"radius":50}}]}
            """#
        try await fixture.app().test(.router) { client in
            let response = try await client.execute(
                uri: "/v1/regions/apply", method: .post, headers: .bearer(fixture.admin), body: ByteBuffer(string: body)
            )
            #expect(response.status == .unprocessableContent)
            let issues = response.json?["error"]?["issues"]?.arrayValue ?? []
            #expect(issues.count == 2)
            let codes = issues.compactMap { issue in issue["code"]?.stringValue }
            #expect(codes.contains("duplicate_id"))
            let plan = try await client.execute(
                uri: "/v1/regions/plan", method: .post, headers: .bearer(fixture.admin),
                body: ByteBuffer(string: #"{"type":"FeatureCollection","features":[]}"#))
            #expect(plan.json?["remove"]?.numberValue == 1)
        }
        #expect(try await fixture.store.monitoredRegions().map(\.region.id) == ["home"])
    }

    @Test("cursor pages walk every event once, in time order")
    func pagination() async throws {
        let fixture = try await ServiceFixture()
        defer { fixture.cleanUp() }
        try await fixture.app().test(.router) { client in
            for round in 0..<4 {
                _ = try await client.execute(
                    uri: "/v1/devices/phone/locations", method: .post, headers: .bearer(fixture.admin),
                    body: ByteBuffer(
                        string: ServiceFixture.batchBody(
                            ServiceFixture.walk(start: 1_750_000_000 + Double(round) * 3600))))
            }
            var seen: [String] = []
            var uri = "/v1/events?limit=3"
            while true {
                let page = try await client.execute(uri: uri, method: .get, headers: .bearer(fixture.reader))
                seen += page.json?["events"]?.arrayValue?.compactMap { $0["time"]?.stringValue } ?? []
                guard let next = page.json?["next_cursor"]?.stringValue else { break }
                uri = "/v1/events?limit=3&cursor=\(next)"
            }
            #expect(seen.count == 8)
            #expect(seen == seen.sorted())
            let csv = try await client.execute(
                uri: "/v1/events?format=csv&kind=enter", method: .get, headers: .bearer(fixture.reader))
            #expect(csv.headers[.contentType]?.hasPrefix("text/csv") == true)
            #expect(csv.text.split(separator: "\n").count == 5)
            let ics = try await client.execute(
                uri: "/v1/events?format=ics", method: .get, headers: .bearer(fixture.reader))
            #expect(ics.text.components(separatedBy: "BEGIN:VEVENT").count - 1 == 4)
            let bad = try await client.execute(
                uri: "/v1/events?cursor=zzz", method: .get, headers: .bearer(fixture.reader))
            #expect(bad.status == .badRequest)
        }
    }

    @Test("unknown routes and unexpected failures still answer a JSON error")
    func jsonErrors() async throws {
        let fixture = try await ServiceFixture()
        defer { fixture.cleanUp() }
        try await fixture.app().test(.router) { client in
            let missing = try await client.execute(
                uri: "/v1/nothing-here", method: .get, headers: .bearer(fixture.admin))
            #expect(missing.status == .notFound)
            #expect(missing.json?["error"]?["code"]?.stringValue == "not_found")
        }
    }
}
