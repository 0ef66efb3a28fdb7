import FencepostCore
import FencepostFormats
import FencepostService
import FencepostStore
import FencepostTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

/// The roster's geofence budgets (a device's `geofence_budget` or `platform`, or its group's)
/// stand in for the request's in the monitored set and OwnTracks' setWaypoints.
@Suite("Geofence budgets from the roster")
struct RosterBudgetAPITests {
    @Test("a device's own budget, else its group's, when the request gives none; the request's wins")
    func monitoredSetTakesTheRostersBudget() async throws {
        let fixture = try await ServiceFixture()
        defer { fixture.cleanUp() }
        try await MonitoredSetAPITests.withRow(fixture)
        let roster = try RosterFile.json(
            Array(
                #"""
                [{"device": "phone", "geofence_budget": 6},
                 {"device": "tablet", "groups": ["fleet"]},
                 {"group": "fleet", "platform": "android"}]
                """#.utf8), file: "roster.json")
        try await fixture.store.applyRoster(roster)
        try await fixture.app().test(.live) { client in
            func regions(_ device: String, _ query: String = "") async throws -> Int? {
                let response = try await client.execute(
                    uri: "/v1/devices/\(device)/monitored-set?lat=47.0&lon=8.0\(query)", method: .get,
                    headers: .bearer(fixture.admin))
                #expect(response.status == .ok, "\(response.text)")
                return response.json?["regions"]?.arrayValue?.count
            }
            #expect(try await regions("phone") == 5, "6 slots: 5 regions and the re-plan circle")
            #expect(try await regions("tablet") == 31, "the fleet's android: all 31 regions fit")
            #expect(try await regions("stranger") == 19, "iOS's 20 when nobody says")
            #expect(try await regions("phone", "&platform=ios") == 19, "the request's platform wins")

            // OwnTracks gets setWaypoints within the roster's budget too.
            var headers = HTTPFields.bearer(fixture.admin)
            headers[HTTPField.Name("X-Limit-D")!] = "tablet"
            let posted = try await client.execute(
                uri: "/owntracks", method: .post, headers: headers,
                body: ByteBuffer(string: #"{"_type":"location","lat":47.0,"lon":8.0,"tst":1750000000,"acc":5}"#))
            let waypoints = posted.json?.arrayValue?.first?["waypoints"]?["waypoints"]?.arrayValue
            #expect(waypoints?.count == 31, "every region, and no re-plan circle: they all fit")
        }
    }

    @Test("roster files carry budgets: JSON for devices and groups, CSV columns; a bad one is refused with its place")
    func rosterFiles() throws {
        let csv = try RosterFile.csv(
            Array("device,name,groups,geofence_budget,platform\nphone,Phone,,40,\npad,,fleet,,ios\n".utf8),
            file: "r.csv")
        #expect(csv.entries["phone"]?.budget == GeofenceBudget(count: 40))
        #expect(csv.geofenceBudget(of: "pad") == 20)
        #expect(csv.geofenceBudget(of: "nobody") == nil)
        let groups = try RosterFile.json(
            Array(
                #"[{"device":"a","groups":["x","y"]},{"group":"x","geofence_budget":50},{"group":"y","platform":"ios"}]"#
                    .utf8),
            file: "r.json")
        #expect(groups.geofenceBudget(of: "a") == 20, "the smallest of its groups'")
        #expect(throws: TraceReadError.self) {
            try RosterFile.csv(Array("device,platform\nphone,symbian\n".utf8), file: "r.csv")
        }
        do {
            _ = try RosterFile.json(Array(#"[{"device":"a","geofence_budget":1}]"#.utf8), file: "r.json")
            Issue.record("a budget of 1 was taken")
        } catch {
            #expect(error.reason.contains("geofence_budget must be a whole number from 2 to 10000"))
        }
    }
}
