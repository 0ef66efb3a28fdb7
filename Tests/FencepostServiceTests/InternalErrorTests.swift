import FencepostCore
import FencepostService
import FencepostStore
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@Suite("Internal errors")
struct InternalErrorTests {
    @Test("a 500 says where to look in the log, never the error's own text")
    func internalErrorsKeepTheirText() async throws {
        let fixture = try await ServiceFixture()
        defer { fixture.cleanUp() }
        // A store that fails in a way no request can cause: its visits table is gone.
        try await fixture.store.write { tx in try await tx.execute("ALTER TABLE visits RENAME TO visits_moved_away") }
        try await fixture.app().test(.router) { client in
            let response = try await client.execute(uri: "/v1/visits", method: .get, headers: .bearer(fixture.reader))
            #expect(response.status == .internalServerError)
            #expect(response.json?["error"]?["code"]?.stringValue == "internal")
            let message = try #require(response.json?["error"]?["message"]?.stringValue)
            #expect(
                message.range(
                    of: #"^the request failed \(error id [0-9a-f]{12} in the service's log\)$"#,
                    options: .regularExpression) != nil)
            #expect(
                !response.text.contains("visits"), "the SQL or the table's name reached the client: \(response.text)")
        }
    }

    @Test("a token in the query is taken on the OsmAnd routes only")
    func queryTokensOnlyForOsmAnd() async throws {
        let fixture = try await ServiceFixture()
        defer { fixture.cleanUp() }
        try await fixture.app().test(.router) { client in
            let events = try await client.execute(uri: "/v1/events?token=\(fixture.admin)", method: .get)
            #expect(events.status == .unauthorized)
            let osmAnd = try await client.execute(
                uri: "/osmand?id=phone&lat=47&lon=8&timestamp=1750001000&token=\(fixture.phone)", method: .get)
            #expect(osmAnd.status == .ok)
        }
    }
}
