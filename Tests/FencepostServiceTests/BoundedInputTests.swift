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

/// What a client controls is bounded before it reaches the store or the metrics: device ids,
/// the count of fixes in one request, and the label values of `/metrics`.
@Suite("Bounded input")
struct BoundedInputTests {
    @Test("a device id too long or with characters outside the allowed set is refused with 422, nothing stored")
    func deviceIdsChecked() async throws {
        let fixture = try await ServiceFixture()
        defer { fixture.cleanUp() }
        let body = ServiceFixture.batchBody(ServiceFixture.walk())
        try await fixture.app().test(.router) { client in
            for device in [String(repeating: "d", count: 129), "phone%20one", "ph%C3%B6ne", "a%0Ab"] {
                let posted = try await client.execute(
                    uri: "/v1/devices/\(device)/locations", method: .post, headers: .bearer(fixture.admin),
                    body: ByteBuffer(string: body))
                #expect(posted.status == .unprocessableContent, "\(device)")
                #expect(posted.json?["error"]?["code"]?.stringValue == "invalid_device", "\(device)")
            }
            let longest = String(repeating: "d", count: 128)
            let accepted = try await client.execute(
                uri: "/v1/devices/\(longest)/locations", method: .post, headers: .bearer(fixture.admin),
                body: ByteBuffer(string: body))
            #expect(accepted.status == .ok)
        }
        await #expect(try fixture.counts().events == 2)
    }

    @Test("a request with more fixes than allowed is refused whole (413), naming the limit")
    func fixesPerRequestBounded() async throws {
        let fixture = try await ServiceFixture()
        defer { fixture.cleanUp() }
        let fix = #"{"time":1750000000,"lat":52.5,"lon":13.4}"#
        let body =
            #"{"fixes":["# + Array(repeating: fix, count: LocationPayloads.maximumFixes + 1).joined(separator: ",")
            + "]}"
        try await fixture.app().test(.router) { client in
            let posted = try await client.execute(
                uri: "/v1/devices/phone/locations", method: .post, headers: .bearer(fixture.phone),
                body: ByteBuffer(string: body))
            #expect(posted.status == .contentTooLarge)
            #expect(posted.json?["error"]?["code"]?.stringValue == "too_many_fixes")
            #expect(
                posted.json?["error"]?["message"]?.stringValue?.contains("\(LocationPayloads.maximumFixes)") == true)
        }
        await #expect(try fixture.counts().events == 0)
    }

    @Test("paths and methods a client makes up do not become metrics label values")
    func metricsLabelsBounded() async throws {
        let fixture = try await ServiceFixture()
        defer { fixture.cleanUp() }
        try await fixture.app().test(.router) { client in
            for index in 0..<20 {
                _ = try await client.execute(uri: "/made-up-\(index)", method: .get)
                _ = try await client.execute(uri: "/v1/events", method: HTTPRequest.Method("BREW\(index)")!)
            }
            let text = try await client.execute(uri: "/metrics", method: .get, headers: .bearer(fixture.reader)).text
            #expect(!text.contains("made-up"))
            #expect(!text.contains("BREW"))
            // The twenty made-up paths share one series (the router's name for no route), and so
            // do the twenty made-up methods.
            let notFound = text.split(separator: "\n").filter {
                $0.hasPrefix("fencepost_http_request_duration_seconds_count{") && $0.contains(#"status="404""#)
            }
            #expect(notFound.count == 2, "\(notFound)")
            #expect(notFound.allSatisfy { $0.hasSuffix(" 20") }, "\(notFound)")
            #expect(notFound.contains { $0.contains(#"method="other""#) })
        }
    }
}
