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

/// A phone that was offline for an hour sends its queue when it is back: the fixes are taken in
/// time order as any others, and the events they make are flagged `replayed`, so a consumer can
/// tell an arrival of an hour ago from news. Fixes posted as they are taken make plain events.
@Suite struct ReplayedFixesTests {
    @Test func anHourQueuedOfflineMakesReplayedEventsAndLiveFixesPlainOnes() async throws {
        let fixture = try await ServiceFixture()
        defer { fixture.cleanUp() }
        let now = Date().timeIntervalSince1970.rounded()
        // The walk through home (600 m south to 600 m north, a fix a minute) an hour ago, sent
        // in one request, newest last; then, live, a walk back in that is still under way.
        let queued = ServiceFixture.walk(start: now - 3_600)
        let live = [
            (time: now - 60, lat: ServiceFixture.home.lat + 0.0027, lon: ServiceFixture.home.lon),
            (time: now, lat: ServiceFixture.home.lat, lon: ServiceFixture.home.lon),
        ]
        try await fixture.app().test(.router) { client in
            for fixes in [queued, live] {
                let answer = try await client.execute(
                    uri: "/v1/devices/phone/locations", method: .post, headers: .bearer(fixture.phone),
                    body: ByteBuffer(string: ServiceFixture.batchBody(fixes)))
                #expect(answer.status == .ok, "\(answer.text)")
            }
        }
        var events: [(kind: String, time: Double, flags: [String])] = []
        try await fixture.store.forEachEvent(EventQuery()) {
            events.append(($0.kind, Double($0.timeMs) / 1000, $0.flags))
        }
        #expect(events.map(\.kind) == ["enter", "exit", "enter"])
        #expect(events.prefix(2).allSatisfy { $0.flags.contains("replayed") && $0.time < now - 3_000 })
        #expect(events.last?.flags.contains("replayed") == false)
    }
}
