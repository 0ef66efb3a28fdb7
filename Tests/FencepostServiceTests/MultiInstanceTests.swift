import AsyncHTTPClient
import FencepostCore
import FencepostServerTestSupport
import FencepostService
import FencepostStore
import FencepostTestSupport
import Foundation
import Hummingbird
import HummingbirdTesting
import NIOCore
import NIOHTTP1
import Testing

/// Two service instances on one store (two connections to one PostgreSQL database, or to one
/// SQLite file), as behind a load balancer that knows nothing of devices.
@Suite("Several instances on one store")
struct MultiInstanceTests {
    /// Three laps through home (north, south, north), a minute between fixes.
    static let laps: [(time: Double, lat: Double, lon: Double)] = (0..<3).flatMap { lap in
        ServiceFixture.walk(start: 1_750_000_000 + Double(lap) * 13 * 60).enumerated().map { index, fix in
            let walked = ServiceFixture.walk()
            return (fix.time, lap % 2 == 0 ? fix.lat : walked[walked.count - 1 - index].lat, fix.lon)
        }
    }
    static let batches = stride(from: 0, to: laps.count, by: 3).map { Array(laps[$0..<min($0 + 3, laps.count)]) }

    enum Delivery: String, CaseIterable, CustomTestStringConvertible {
        case alternately, toBothAtOnce
        var testDescription: String { rawValue }
    }

    /// Events, visits and outbox rows a store holds, for comparing two runs.
    static func contents(_ store: Store) async throws -> (events: [EventRow], visits: [String], outbox: [String]) {
        var events: [EventRow] = []
        try await store.forEachEvent(EventQuery()) { events.append($0) }
        var visits: [String] = []
        try await store.forEachVisit {
            visits.append("\($0.id) \($0.status) \($0.enteredMs) \($0.exitedMs ?? -1) v\($0.version)")
        }
        let outbox = try await store.syncChanges(after: 0, entities: [.event, .visit], device: nil, limit: 10_000).map(
            \.mutation.key)
        return (events, visits, outbox)
    }

    static func post(
        _ batch: [(time: Double, lat: Double, lon: Double)], to client: some TestClientProtocol, token: String
    ) async throws -> UInt {
        let response = try await client.execute(
            uri: "/v1/devices/phone/locations", method: .post, headers: .bearer(token),
            body: ByteBuffer(string: ServiceFixture.batchBody(batch)))
        return UInt(response.status.code)
    }

    @Test(
        "one device's batches through two instances give exactly the events one instance gives",
        arguments: Delivery.allCases)
    func oneDeviceThroughTwoInstances(delivery: Delivery) async throws {
        let single = try await ServiceFixture()
        defer { single.cleanUp() }
        try await single.app().test(.router) { client in
            for batch in Self.batches {
                let status = try await Self.post(batch, to: client, token: single.phone)
                #expect(status == 200)
            }
        }
        let expected = try await Self.contents(single.store)
        #expect(expected.events.map(\.kind) == ["enter", "exit", "enter", "exit", "enter", "exit"])

        let fixture = try await ServiceFixture()
        defer { fixture.cleanUp() }
        let second = try await fixture.secondStore()
        try await fixture.app().test(.router) { first in
            try await fixture.app(store: second).test(.router) { other in
                for (index, batch) in Self.batches.enumerated() {
                    switch delivery {
                    case .alternately:
                        // Each instance has the device's state from two batches ago: it must
                        // see that the other changed it, and reload.
                        let status =
                            index % 2 == 0
                            ? try await Self.post(batch, to: first, token: fixture.phone)
                            : try await Self.post(batch, to: other, token: fixture.phone)
                        #expect(status == 200)
                    case .toBothAtOnce:
                        // A client's retry landing on the other instance while the first try
                        // is still being processed: one of them does it, the other finds it done.
                        async let a = Self.post(batch, to: first, token: fixture.phone)
                        async let b = Self.post(batch, to: other, token: fixture.phone)
                        let statuses = try await [a, b]
                        #expect(statuses == [200, 200])
                    }
                }
            }
        }
        let got = try await Self.contents(fixture.store)
        #expect(got.events == expected.events)
        #expect(got.visits == expected.visits)
        #expect(got.outbox == expected.outbox)
        await second.close()
    }

    @Test(
        "an event posted to one instance reaches the other's live stream; a region put on one is monitored by the other"
    )
    func instancesHearEachOther() async throws {
        let fixture = try await ServiceFixture()
        defer { fixture.cleanUp() }
        let second = try await fixture.secondStore()
        // The listening instance polls rarely: what it shows at once it heard (LISTEN, on
        // PostgreSQL; its poll, on SQLite, where this test waits for that).
        let listenerPoll: Duration = TestStores.onPostgres ? .seconds(30) : .milliseconds(200)
        let http = HTTPClient(eventLoopGroupProvider: .singleton)
        do {
            try await fixture.app(pollInterval: listenerPoll).test(.live) { listening in
                try await fixture.app(store: second).test(.live) { posting in
                    var request = HTTPClientRequest(url: "http://127.0.0.1:\(listening.port!)/v1/events/stream")
                    request.headers.add(name: "Authorization", value: "Bearer \(fixture.reader)")
                    let stream = try await http.execute(request, timeout: .seconds(30))
                    #expect(stream.status.code == 200)
                    let reader = Task { try await ServerSentEvents.read(stream, count: 2) }

                    let posted = try await Self.post(ServiceFixture.walk(), to: posting, token: fixture.phone)
                    #expect(posted == 200)
                    let streamed = try await ServerSentEvents.within(.seconds(15), reader)
                    #expect(streamed.map(\.kind) == ["enter", "exit"])

                    // A region put through the listening instance; fixes through it posted to the other.
                    let shop = ServiceFixture.circleFeature(id: "shop", lat: 47.01, lon: 8.0, radius: 100)
                    let put = try await listening.execute(
                        uri: "/v1/regions/shop", method: .put, headers: .bearer(fixture.admin),
                        body: ByteBuffer(string: shop))
                    #expect(put.status == .created)
                    let throughShop = ServiceFixture.walk(start: 1_750_010_000).map { ($0.time, $0.lat + 0.01, $0.lon) }
                    let postedThroughShop = try await Self.post(throughShop, to: posting, token: fixture.phone)
                    #expect(postedThroughShop == 200)
                    var regions: [String] = []
                    try await fixture.store.forEachEvent(EventQuery()) {
                        if let region = $0.region { regions.append(region) }
                    }
                    #expect(regions == ["home", "home", "shop", "shop"])
                }
            }
        } catch {
            try await http.shutdown()
            throw error
        }
        try await http.shutdown()
        await second.close()
    }

    @Test("webhooks: two instances deliver each event once; when the delivering one stops, the other takes over")
    func webhookDeliveredOnceAcrossInstances() async throws {
        let fixture = try await ServiceFixture()
        defer { fixture.cleanUp() }
        let second = try await fixture.secondStore()
        let inbox = WebhookInbox()
        try await inbox.receiver().test(.live) { receiver in
            let configuration = ServiceConfiguration(
                webhooks: [
                    .init(name: "ops", url: "http://127.0.0.1:\(receiver.port!)/hook", secret: WebhookTests.secret)
                ])
            try await fixture.app(configuration, store: second).test(.router) { staying in
                try await fixture.app(configuration).test(.router) { stopping in
                    let posted = try await Self.post(ServiceFixture.walk(), to: stopping, token: fixture.phone)
                    #expect(posted == 200)
                    try await WebhookTests.eventually { await inbox.deliveries.count >= 2 }
                    // Long enough for a second deliverer, were there one, to send its copies.
                    try await Task.sleep(for: .seconds(1))
                }
                // One instance stopped (whichever was delivering, or not): the other delivers.
                let later = ServiceFixture.walk(start: 1_750_020_000)
                let posted = try await Self.post(later, to: staying, token: fixture.phone)
                #expect(posted == 200)
                try await WebhookTests.eventually { await inbox.deliveries.count >= 4 }
                try await Task.sleep(for: .seconds(1))
            }
        }
        var events: [String] = []
        try await fixture.store.forEachEvent(EventQuery()) { events.append($0.id) }
        let delivered = await inbox.deliveries.map(\.eventID)
        #expect(events.count == 4)
        #expect(delivered == events, "each event once, in order")
        await second.close()
    }
}

/// Reading `text/event-stream` answers.
enum ServerSentEvents {
    struct Event: Sendable {
        var id: String
        var kind: String
    }

    /// Reads events until `count` have come: each one's `id:` and `event:`.
    static func read(_ response: HTTPClientResponse, count: Int) async throws -> [Event] {
        var text = ""
        for try await chunk in response.body {
            text += String(buffer: chunk)
            let events = text.components(separatedBy: "\n\n").compactMap { block -> Event? in
                let lines = block.split(separator: "\n")
                guard let id = lines.first(where: { $0.hasPrefix("id: ") }),
                    let kind = lines.first(where: { $0.hasPrefix("event: ") })
                else {
                    return nil
                }
                return Event(id: String(id.dropFirst(4)), kind: String(kind.dropFirst(7)))
            }
            if events.count >= count { return events }
        }
        return []
    }

    /// The reader's events, or none if they have not all come within `limit`.
    static func within(_ limit: Duration, _ reader: Task<[Event], any Error>) async throws -> [Event] {
        try await withThrowingTaskGroup(of: [Event].self) { group in
            group.addTask { try await reader.value }
            group.addTask {
                try await Task.sleep(for: limit)
                reader.cancel()
                return []
            }
            let first = try await group.next()!
            group.cancelAll()
            return first
        }
    }
}
