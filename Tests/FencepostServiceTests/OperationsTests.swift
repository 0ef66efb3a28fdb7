import FencepostCore
import FencepostService
import FencepostStore
import Foundation
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

@Suite("Operations: metrics, outbox clean-up, time windows")
struct OperationsTests {
    /// The value of the exposition line that starts with `series` (name and labels), if any.
    static func sample(_ exposition: String, _ series: String) -> Double? {
        exposition.split(separator: "\n").first { $0.hasPrefix(series + " ") }.flatMap {
            Double($0.split(separator: " ").last!)
        }
    }

    @Test("request metrics count each request under its route pattern, method and status; ingest counters add up")
    func requestMetrics() async throws {
        let fixture = try await ServiceFixture()
        defer { fixture.cleanUp() }
        try await fixture.app().test(.router) { client in
            for _ in 0..<3 { #expect(try await client.execute(uri: "/healthz", method: .get).status == .ok) }
            let body = ByteBuffer(string: ServiceFixture.batchBody(ServiceFixture.walk()))
            #expect(
                try await client.execute(
                    uri: "/v1/devices/phone/locations", method: .post, headers: .bearer(fixture.phone), body: body
                ).status == .ok)
            #expect(
                try await client.execute(uri: "/v1/devices/phone/locations", method: .post, body: body).status
                    == .unauthorized)
            #expect(
                try await client.execute(
                    uri: "/v1/devices/phone/locations", method: .post, headers: .bearer(fixture.otherDevice), body: body
                ).status == .forbidden)
            for _ in 0..<2 {
                #expect(
                    try await client.execute(uri: "/v1/regions/nowhere", method: .get, headers: .bearer(fixture.reader))
                        .status == .notFound)
            }
            #expect(
                try await client.execute(uri: "/v1/regions/home", method: .get, headers: .bearer(fixture.reader)).status
                    == .ok)

            let text = try await client.execute(uri: "/metrics", method: .get).text
            func requests(_ route: String, _ method: String, _ status: Int) -> Double? {
                Self.sample(
                    text,
                    #"fencepost_http_request_duration_seconds_count{route="\#(route)",method="\#(method)",status="\#(status)"}"#
                )
            }
            #expect(requests("/healthz", "GET", 200) == 3)
            #expect(requests("/v1/devices/{device}/locations", "POST", 200) == 1)
            #expect(requests("/v1/devices/{device}/locations", "POST", 401) == 1)
            #expect(requests("/v1/devices/{device}/locations", "POST", 403) == 1)
            #expect(requests("/v1/regions/{id}", "GET", 404) == 2, "one series per route, not per path")
            #expect(requests("/v1/regions/{id}", "GET", 200) == 1)
            #expect(!text.contains("nowhere"))
            // The batch: 13 fixes, one visit of home (an enter and an exit); nothing dropped.
            #expect(Self.sample(text, "fencepost_fixes_ingested_total") == 13)
            #expect(Self.sample(text, #"fencepost_events_total{kind="enter"}"#) == 1)
            #expect(Self.sample(text, #"fencepost_events_total{kind="exit"}"#) == 1)
            #expect(!text.contains("fencepost_fixes_dropped_total{"))
            // The region, two events and the visit opened then closed, waiting for sync.
            #expect(Self.sample(text, #"fencepost_outbox_depth_rows{status="pending"}"#) == 5)

            // The same batch again: every fix already seen, counted by reason.
            _ = try await client.execute(
                uri: "/v1/devices/phone/locations", method: .post, headers: .bearer(fixture.phone), body: body)
            let again = try await client.execute(uri: "/metrics", method: .get).text
            #expect(Self.sample(again, #"fencepost_fixes_dropped_total{reason="already_seen"}"#) == 13)
            #expect(Self.sample(again, "fencepost_fixes_ingested_total") == 26)
            #expect(
                Self.sample(
                    again, #"fencepost_http_request_duration_seconds_count{route="/metrics",method="GET",status="200"}"#
                ) == 1)
        }
    }

    @Test("the outbox clean-up job runs at start-up: delivered events and visits past the retention go, the rest stays")
    func outboxCleanupAtStart() async throws {
        let fixture = try await ServiceFixture()
        defer { fixture.cleanUp() }
        let off = ServiceConfiguration(jobs: .init(outboxCleanup: false))
        try await fixture.app(off).test(.router) { client in
            let body = ByteBuffer(string: ServiceFixture.batchBody(ServiceFixture.walk()))
            let posted = try await client.execute(
                uri: "/v1/devices/phone/locations", method: .post, headers: .bearer(fixture.phone), body: body)
            #expect(posted.status == .ok)
        }
        // Everything pushed to a backend ten days ago.
        let items = try await fixture.store.claimPushBatch(limit: 100, maxBytes: 1 << 20)
        #expect(items.count == 5)
        try await fixture.store.acknowledge(
            items, results: Dictionary(uniqueKeysWithValues: items.map { ($0.mutation.key, .applied) }),
            at: Date().addingTimeInterval(-10 * 86_400))

        try await fixture.app(off).test(.router) { client in
            let health = try await client.execute(uri: "/healthz", method: .get)
            #expect(health.status == .ok)
        }
        await #expect(try fixture.store.syncStatus().counts[.delivered] == 5, "switched off, the job does not run")
        let on = ServiceConfiguration(jobs: .init(outboxCleanup: true, outboxRetentionDays: 7))
        try await fixture.app(on).test(.router) { client in
            for _ in 0..<100 where try await fixture.store.syncStatus().counts[.delivered] != 1 {
                try await Task.sleep(for: .milliseconds(50))
            }
        }
        // The region's row stays: a backend that starts later pulls regions from the outbox.
        await #expect(try fixture.store.syncStatus().counts[.delivered] == 1)
        await #expect(
            try fixture.store.syncChanges(after: 0, entities: nil, device: nil, limit: 100).map(\.mutation.entity) == [
                .region
            ])
    }

    @Test("since is inclusive and until exclusive, in any offset, on the API as on the CLI")
    func sinceAndUntil() async throws {
        let fixture = try await ServiceFixture()
        defer { fixture.cleanUp() }
        try await fixture.app().test(.router) { client in
            for hour in 0..<3 {
                let body = ByteBuffer(
                    string: ServiceFixture.batchBody(ServiceFixture.walk(start: 1_750_000_000 + Double(hour) * 3600)))
                #expect(
                    try await client.execute(
                        uri: "/v1/devices/phone/locations", method: .post, headers: .bearer(fixture.phone), body: body
                    ).status == .ok)
            }
            let all = try await client.execute(uri: "/v1/events", method: .get, headers: .bearer(fixture.reader))
            let times = all.json?["events"]?.arrayValue?.compactMap { $0["time"]?.stringValue } ?? []
            #expect(times.count == 6)
            func window(_ query: String) async throws -> [String] {
                let page = try await client.execute(
                    uri: "/v1/events?" + query, method: .get, headers: .bearer(fixture.reader))
                #expect(page.status == .ok, "\(query): \(page.text)")
                return page.json?["events"]?.arrayValue?.compactMap { $0["time"]?.stringValue } ?? []
            }
            #expect(try await window("since=\(times[2])") == Array(times[2...]))
            #expect(try await window("until=\(times[2])") == Array(times[..<2]))
            #expect(try await window("since=\(times[1])&until=\(times[4])") == Array(times[1..<4]))
            // The same instant written in another offset selects the same.
            #expect(
                try await window("since=" + Self.inZone(times[2], hours: 2).replacingOccurrences(of: "+", with: "%2B"))
                    == Array(times[2...]))
            #expect(try await window("until=" + Self.inZone(times[2], hours: -5)) == Array(times[..<2]))
            #expect(
                try await window("since=" + Self.inZone(times[2], hours: 2)) == Array(times[2...]), "a '+' left as is")
            let bad = try await client.execute(
                uri: "/v1/events?since=yesterday", method: .get, headers: .bearer(fixture.reader))
            #expect(bad.status == .badRequest)
            #expect(bad.json?["error"]?["message"]?.stringValue == "since is not an RFC 3339 time: yesterday")
        }
    }

    /// A UTC time (`…Z`) written in a zone `hours` from UTC: the same instant.
    static func inZone(_ utc: String, hours: Int) -> String {
        let local = Timestamp.format(seconds: Timestamp.parse(utc)! + Double(hours * 3600)).dropLast()
        return local + (hours < 0 ? "-" : "+") + String(format: "%02d:00", abs(hours))
    }
}
