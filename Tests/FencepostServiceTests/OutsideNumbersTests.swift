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

/// Numbers from outside that once trapped (`time: 1e18` killed `serve` in
/// `Timestamp.milliseconds`), replayed on every protocol: each is refused with a 422 that names
/// the fix, nothing is written, and the service still answers.
@Suite("Numbers from outside")
struct OutsideNumbersTests {
    /// A crash replay: each protocol's request carrying a time no fix can have.
    @Test(
        "a time past any range is refused with 422 naming the fix, on every protocol; nothing written, still healthy",
        arguments: [
            ("batch seconds", "/v1/devices/phone/locations", #"{"fixes":[{"time":1e18,"lat":47.0,"lon":8.0}]}"#),
            (
                "batch string", "/v1/devices/phone/locations",
                #"{"fixes":[{"time":"9999-01-01T00:00:00Z","lat":47.0,"lon":8.0}]}"#
            ),
            ("batch before 1970", "/v1/devices/phone/locations", #"{"fixes":[{"time":-5,"lat":47.0,"lon":8.0}]}"#),
            // A phone whose clock reset to the epoch, and one whose GPS week rolled over (1024
            // weeks back from 2019): no live fix is that old, and taken, either would open a
            // visit of decades at the first real fix.
            ("clock reset to 1970", "/v1/devices/phone/locations", #"{"fixes":[{"time":12,"lat":47.0,"lon":8.0}]}"#),
            (
                "GPS week rollover", "/v1/devices/phone/locations",
                #"{"fixes":[{"time":"1999-08-21T10:00:00Z","lat":47.0,"lon":8.0}]}"#
            ),
            (
                "owntracks", "/owntracks",
                #"{"_type":"location","tst":1000000000000000000,"lat":47.0,"lon":8.0,"tid":"phone"}"#
            ),
            ("osmand", "/osmand?id=phone&lat=47.0&lon=8.0&timestamp=1e18", ""),
        ])
    func farTimesAreRefused(name: String, uri: String, body: String) async throws {
        let fixture = try await ServiceFixture()
        defer { fixture.cleanUp() }
        try await fixture.app().test(.router) { client in
            let headers: HTTPFields =
                uri.hasPrefix("/owntracks")
                ? [.authorization: "Basic " + Data("phone:\(fixture.phone)".utf8).base64EncodedString()]
                : .bearer(fixture.phone)
            let answer = try await client.execute(
                uri: uri, method: body.isEmpty ? .get : .post, headers: headers,
                body: body.isEmpty ? nil : ByteBuffer(string: body))
            #expect(answer.status == .unprocessableContent, "\(name): \(answer.text)")
            let message = answer.json?["error"]?["message"]?.stringValue ?? ""
            #expect(message.contains("fix 0"), "\(name): \(message)")
            #expect(message.contains("outside the accepted range"), "\(name): \(message)")
            let health = try await client.execute(uri: "/healthz", method: .get)
            #expect(health.status == .ok)
        }
        let counts = try await fixture.counts()
        #expect(counts.events == 0 && counts.outbox == 0 && counts.devices == 0)
    }

    @Test("milliseconds sent as seconds are refused with a hint; the device's later real fixes are taken")
    func millisecondsAsSeconds() async throws {
        let fixture = try await ServiceFixture()
        defer { fixture.cleanUp() }
        try await fixture.app().test(.router) { client in
            let wrong = try await client.execute(
                uri: "/v1/devices/phone/locations", method: .post, headers: .bearer(fixture.phone),
                body: ByteBuffer(string: #"{"fixes":[{"time":1550475940000,"lat":47.0,"lon":8.0}]}"#))
            #expect(wrong.status == .unprocessableContent)
            #expect(wrong.json?["error"]?["message"]?.stringValue?.contains("looks like milliseconds") == true)
            let right = try await client.execute(
                uri: "/v1/devices/phone/locations", method: .post, headers: .bearer(fixture.phone),
                body: ByteBuffer(string: #"{"fixes":[{"time":1550475940,"lat":47.0,"lon":8.0}]}"#))
            #expect(right.json?["accepted"]?.numberValue == 1)
        }
    }

    @Test("a fix a little ahead of the clock is taken; one more than a day ahead is refused")
    func theClockBound() async throws {
        let fixture = try await ServiceFixture()
        defer { fixture.cleanUp() }
        let now = Date().timeIntervalSince1970
        try await fixture.app().test(.router) { client in
            let ahead = try await client.execute(
                uri: "/v1/devices/phone/locations", method: .post, headers: .bearer(fixture.phone),
                body: ByteBuffer(string: #"{"fixes":[{"time":\#(now + 3_600),"lat":1,"lon":1}]}"#))
            #expect(ahead.json?["accepted"]?.numberValue == 1)
            let tooFar = try await client.execute(
                uri: "/v1/devices/other/locations", method: .post, headers: .bearer(fixture.otherDevice),
                body: ByteBuffer(string: #"{"fixes":[{"time":\#(now + 2 * 86_400),"lat":1,"lon":1}]}"#))
            #expect(tooFar.status == .unprocessableContent)
        }
    }
}
