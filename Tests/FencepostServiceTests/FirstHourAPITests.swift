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

/// What a new user of the API tripped over: exports that ignored `limit`, a 404 for a path that
/// exists, a negative accuracy taken as precise, a kind no event has selecting nothing.
@Suite("The API's first hour")
struct FirstHourAPITests {
    /// 13 fixes through home: an enter and an exit.
    private func postWalk(_ client: some TestClientProtocol, _ fixture: ServiceFixture) async throws {
        let posted = try await client.execute(
            uri: "/v1/devices/phone/locations", method: .post, headers: .bearer(fixture.phone),
            body: ByteBuffer(string: ServiceFixture.batchBody(ServiceFixture.walk())))
        #expect(posted.status == .ok)
    }

    @Test("csv and jsonl exports take limit and cursor as JSON pages do, the next page's cursor in a header")
    func exportsArePaged() async throws {
        let fixture = try await ServiceFixture()
        defer { fixture.cleanUp() }
        try await fixture.app().test(.router) { client in
            try await postWalk(client, fixture)
            let first = try await client.execute(
                uri: "/v1/events?format=jsonl&limit=1", method: .get, headers: .bearer(fixture.reader))
            #expect(first.status == .ok)
            #expect(first.text.split(separator: "\n").count == 1)
            #expect(first.text.contains(#""kind":"enter""#))
            let cursor = try #require(first.headers[HTTPField.Name("X-Next-Cursor")!])
            let second = try await client.execute(
                uri: "/v1/events?format=csv&limit=5&cursor=\(cursor)", method: .get, headers: .bearer(fixture.reader))
            let lines = second.text.split(separator: "\n")
            #expect(lines.count == 2, "the header and the one event left: \(second.text)")
            #expect(lines.last?.contains(",exit,") == true)
            #expect(second.headers[HTTPField.Name("X-Next-Cursor")!] == nil, "nothing follows")
            let whole = try await client.execute(
                uri: "/v1/events?format=ics&limit=1", method: .get, headers: .bearer(fixture.reader))
            #expect(whole.status == .badRequest)
        }
    }

    @Test("a method a path does not take is 405 with Allow, not 404")
    func methodNotAllowed() async throws {
        let fixture = try await ServiceFixture()
        defer { fixture.cleanUp() }
        try await fixture.app().test(.router) { client in
            let delete = try await client.execute(uri: "/v1/events", method: .delete, headers: .bearer(fixture.admin))
            #expect(delete.status == .methodNotAllowed)
            #expect(delete.headers[.allow] == "GET")
            #expect(delete.json?["error"]?["code"]?.stringValue == "method_not_allowed")
            let put = try await client.execute(uri: "/v1/regions/home", method: .patch, headers: .bearer(fixture.admin))
            #expect(put.status == .methodNotAllowed)
            #expect(put.headers[.allow] == "GET, PUT, DELETE")
            let missing = try await client.execute(uri: "/v1/nothing", method: .get, headers: .bearer(fixture.admin))
            #expect(missing.status == .notFound)
        }
        #expect(try await fixture.store.monitoredRegions().count == 1)
    }

    @Test("a negative accuracy is refused, naming the fix; so is a kind no event has")
    func negativeAccuracyAndUnknownKind() async throws {
        let fixture = try await ServiceFixture()
        defer { fixture.cleanUp() }
        try await fixture.app().test(.router) { client in
            let negative = try await client.execute(
                uri: "/v1/devices/phone/locations", method: .post, headers: .bearer(fixture.phone),
                body: ByteBuffer(string: #"{"fixes":[{"time":1750000000,"lat":47,"lon":8,"accuracy":-1}]}"#))
            #expect(negative.status == .unprocessableContent)
            #expect(negative.json?["error"]?["message"]?.stringValue?.contains("accuracy must be 0 or more") == true)
            let osmand = try await client.execute(
                uri: "/osmand?id=phone&lat=47&lon=8&timestamp=1750000000&hdop=-3&token=\(fixture.phone)", method: .get)
            #expect(osmand.status == .unprocessableContent)
            let kind = try await client.execute(
                uri: "/v1/events?kind=bogus", method: .get, headers: .bearer(fixture.reader))
            #expect(kind.status == .badRequest)
            #expect(kind.json?["error"]?["message"]?.stringValue?.contains("enter, exit, dwell") == true)
        }
        #expect(try await fixture.counts().devices == 0)
    }
}
