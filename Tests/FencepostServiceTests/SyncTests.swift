import AsyncHTTPClient
import FencepostCore
import FencepostIngest
import FencepostServerTestSupport
import FencepostService
import FencepostStore
import FencepostSync
import FencepostTestSupport
import Foundation
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

/// Sync between two real stores over real HTTP on 127.0.0.1: the backend is the service, the
/// client a `SyncPusher` (as `fencepost sync push` runs it), with the fault-injecting proxy
/// between them where the test needs faults.
@Suite("Sync")
struct SyncTests {
    /// Quick retries, so fault tests take a second, not minutes.
    static let quickRetries = RetrySchedule(quick: [0, 0.05, 0.1], cap: 0.2)

    /// A client store with the fixture's region and `laps` walks through it by each device.
    static func client(devices: [String], laps: Int) async throws -> ServiceFixture {
        let client = try await ServiceFixture()
        let session = try await IngestSession(store: client.store)
        for device in devices {
            try await session.ingest(
                (0..<laps).flatMap { lap in
                    ServiceFixture.walk(start: 1_750_000_000 + Double(lap) * 3_600).map { fix in
                        Fix(device: device, time: fix.time, lat: fix.lat, lon: fix.lon, accuracy: 5)
                    }
                })
        }
        return client
    }

    /// Events and visits by id with their content (not the store's own timestamps).
    static func contents(_ store: Store) async throws -> (events: [String], visits: [String]) {
        var events: [String] = []
        try await store.forEachEvent(EventQuery()) { event in
            events.append(
                [
                    event.id, event.kind, event.source, event.device, event.region ?? "", event.visitID ?? "",
                    event.time,
                    event.flags.joined(separator: ","), "\(event.lat ?? 0)", "\(event.lon ?? 0)", event.properties,
                ].joined(separator: " "))
        }
        var visits: [String] = []
        try await store.forEachVisit {
            visits.append(
                "\($0.id) \($0.device) \($0.region) \($0.enteredAt) \($0.exitedAt ?? "-") \($0.status) \($0.exitReason ?? "-") v\($0.version)"
            )
        }
        return (events.sorted(), visits.sorted())
    }

    static func push(
        _ store: Store, to url: String, token: String, batch: Int = 10, maxAttempts: Int = 10,
        timeout: Duration = .seconds(5),
        giveUpAfter: Duration = .seconds(30)
    ) async throws -> PushReport {
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        defer { _ = client.shutdown() }
        let endpoint = try SyncEndpoint(baseURL: url, token: token, timeout: timeout)
        let settings = PushSettings(
            batchSize: batch, maxAttempts: maxAttempts, retries: quickRetries, giveUpAfter: giveUpAfter)
        return try await SyncPusher(store: store, endpoint: endpoint, settings: settings, client: client).push()
    }

    @Test(
        "every fault the proxy injects — dropped connections, 500, 429, timeouts, an applied batch whose answer is lost — ends with each event on the backend exactly once"
    )
    func pushThroughFaults() async throws {
        let backend = try await ServiceFixture()
        defer { backend.cleanUp() }
        let client = try await Self.client(devices: ["phone", "tablet"], laps: 6)
        defer { client.cleanUp() }
        let queued = try await client.store.syncStatus().counts[.pending]!
        #expect(queued > 40)

        try await backend.app().test(.live) { live in
            let proxy = try await FaultProxy.start(upstream: "http://127.0.0.1:\(live.port!)")
            proxy.script([
                .dropBeforeForwarding, .status(500), .pass, .status(429, retryAfter: 1), .delay(seconds: 3), .pass,
                .dropAfterForwarding, .dropAfterForwarding, .status(503),
            ])
            let report = try await Self.push(client.store, to: proxy.url, token: backend.admin, timeout: .seconds(2))
            await proxy.stop()

            guard case .drained = report.ending else {
                Issue.record("push ended \(report.ending)")
                return
            }
            // Each of the 7 faults fails a request; on a loaded machine a passed request may also
            // time out (and count), so at least 7. Exactly once is what the checks below hold.
            #expect(report.failedRequests >= 7)
            #expect(report.deadLettered == 0)
            #expect(proxy.seen.filter { $0 != .pass }.count == 7)
            let status = try await client.store.syncStatus()
            #expect(status.counts == [.pending: 0, .inflight: 0, .delivered: queued, .dead: 0])
            await #expect(try Self.contents(backend.store) == Self.contents(client.store))
            // Exactly once: the backend's own outbox holds each event and visit version once.
            let fed = try await backend.store.syncChanges(
                after: 0, entities: [.event, .visit], device: nil, limit: 100_000)
            let sent = try await client.store.syncChanges(
                after: 0, entities: [.event, .visit], device: nil, limit: 100_000)
            #expect(fed.map(\.mutation.key).sorted() == sent.map(\.mutation.key).sorted())
        }
    }

    @Test(
        "batches reach the backend in outbox order while the next one is claimed ahead: after an answered batch comes the very next one, after a failed one the same batch again"
    )
    func batchesInOutboxOrderThroughFaults() async throws {
        let backend = try await ServiceFixture()
        defer { backend.cleanUp() }
        let client = try await Self.client(devices: ["phone", "tablet"], laps: 6)
        defer { client.cleanUp() }
        // Every row's seq by its key, and the seqs in order.
        let rows = try await client.store.syncChanges(after: 0, entities: nil, device: nil, limit: 100_000)
        let seqOf = Dictionary(uniqueKeysWithValues: rows.map { ($0.mutation.key, $0.seq) })
        let order = rows.map(\.seq).sorted()
        #expect(order.count > 40)

        try await backend.app().test(.live) { live in
            let proxy = try await FaultProxy.start(upstream: "http://127.0.0.1:\(live.port!)")
            proxy.script([
                .pass, .status(500), .pass, .pass, .dropAfterForwarding, .pass, .status(503), .dropBeforeForwarding,
                .pass, .resetMidBody,
            ])
            let report = try await Self.push(client.store, to: proxy.url, token: backend.admin, timeout: .seconds(5))
            await proxy.stop()
            guard case .drained = report.ending else {
                Issue.record("push ended \(report.ending)")
                return
            }
            let sent = try proxy.bodies.map { body in
                try SyncWire.parseMutations(JSONParser.parse(Array(body.utf8))).map { seqOf[$0.key]! }
            }
            let faults = proxy.seen
            #expect(sent.count == faults.count && sent.count == report.requests)
            for (index, seqs) in sent.enumerated() {
                #expect(!seqs.isEmpty && seqs == seqs.sorted(), "request \(index): \(seqs)")
                guard index + 1 < sent.count, let first = seqs.first, let last = seqs.last,
                    let next = sent[index + 1].first
                else { continue }
                if faults[index] == .pass && next != first {
                    // Answered: the next request starts at the very next row of the outbox.
                    #expect(order.firstIndex(of: next) == order.firstIndex(of: last)! + 1, "after request \(index)")
                } else {
                    // Failed (a passed request may also time out on a loaded machine): the same
                    // batch is sent again, the one claimed ahead of it back in the queue.
                    #expect(next == first, "after request \(index)")
                }
            }
            #expect(Set(sent.joined()) == Set(order))
            let status = try await client.store.syncStatus()
            #expect(status.counts == [.pending: 0, .inflight: 0, .delivered: order.count, .dead: 0])
            await #expect(try Self.contents(backend.store) == Self.contents(client.store))
        }
    }

    @Test(
        "a mutation the backend rejects lands in the dead-letter list with its reason, and applies once the cause is fixed"
    )
    func rejectedThenRetried() async throws {
        let backend = try await ServiceFixture()
        defer { backend.cleanUp() }
        let client = try await Self.client(devices: ["phone", "tablet"], laps: 1)
        defer { client.cleanUp() }

        try await backend.app().test(.live) { live in
            let url = "http://127.0.0.1:\(live.port!)"
            // A device token may push only its own device's data: the tablet's and the region are refused.
            let first = try await Self.push(client.store, to: url, token: backend.phone)
            guard case .drained = first.ending else {
                Issue.record("push ended \(first.ending)")
                return
            }
            let dead = try await client.store.syncDeadLetters()
            #expect(first.deadLettered == dead.count)
            #expect(
                dead.contains {
                    $0.entity == "region" && $0.lastError == "rejected: regions can only be changed with an admin token"
                })
            #expect(
                dead.contains { $0.lastError == "rejected: this token may sync only device phone's data, not tablet's" }
            )
            await #expect(try Self.contents(backend.store).events.allSatisfy { $0.contains(" phone ") })

            // Fixed: an admin token. Requeued, the same keys apply.
            await #expect(try client.store.retryDeadLetters() == dead.count)
            let second = try await Self.push(client.store, to: url, token: backend.admin)
            #expect(second.delivered == dead.count && second.deadLettered == 0)
            await #expect(try Self.contents(backend.store) == Self.contents(client.store))
        }
    }

    @Test(
        "an unreachable backend only delays (attempts unused, rows stay pending); a failing one uses attempts up, then dead-letters"
    )
    func outages() async throws {
        let backend = try await ServiceFixture()
        defer { backend.cleanUp() }
        let client = try await Self.client(devices: ["phone"], laps: 1)
        defer { client.cleanUp() }
        let queued = try await client.store.syncStatus().counts[.pending]!

        // Port 9 on loopback: nothing listens, the connection is refused.
        let unreachable = try await Self.push(
            client.store, to: "http://127.0.0.1:9", token: backend.admin, maxAttempts: 1, timeout: .seconds(1),
            giveUpAfter: .milliseconds(500))
        guard case .gaveUp = unreachable.ending else {
            Issue.record("push ended \(unreachable.ending)")
            return
        }
        await #expect(try client.store.syncStatus().counts[.pending] == queued)
        await #expect(try client.store.syncStatus().lastError?.contains("unreachable") == true)

        try await backend.app().test(.live) { live in
            let proxy = try await FaultProxy.start(upstream: "http://127.0.0.1:\(live.port!)")
            proxy.outage(.status(503))
            let failing = try await Self.push(
                client.store, to: proxy.url, token: backend.admin, batch: 1_000, maxAttempts: 3)
            await proxy.stop()
            #expect(failing.failedRequests == 3)
            #expect(failing.deadLettered == queued)
            // (Under heavy load an attempt may time out instead of getting its 503; it counts the same.)
            let letters = try await client.store.syncDeadLetters()
            #expect(
                letters.count == queued
                    && letters.allSatisfy { $0.attempts == 3 && $0.lastError.hasPrefix("gave up after 3 attempts: ") },
                "\(letters.map(\.lastError))")
        }
    }

    @Test("the change feed pages by cursor; a device token sees regions and its own device's data only")
    func changeFeed() async throws {
        let backend = try await ServiceFixture()
        defer { backend.cleanUp() }
        try await backend.app().test(.router) { client in
            for (device, token) in [("phone", backend.phone), ("other", backend.otherDevice)] {
                let posted = try await client.execute(
                    uri: "/v1/devices/\(device)/locations", method: .post, headers: .bearer(token),
                    body: ByteBuffer(string: ServiceFixture.batchBody(ServiceFixture.walk())))
                #expect(posted.status == .ok)
            }
            var cursor = "0"
            var seen: [JSONValue] = []
            while true {
                let page = try await client.execute(
                    uri: "/v1/sync/changes?limit=3&cursor=\(cursor)", method: .get, headers: .bearer(backend.reader))
                #expect(page.status == .ok)
                let changes = page.json?["changes"]?.arrayValue ?? []
                seen += changes
                cursor = page.json?["next_cursor"]?.stringValue ?? ""
                if page.json?["has_more"] != .bool(true) { break }
            }
            let all = try await backend.store.syncChanges(after: 0, entities: nil, device: nil, limit: 1_000)
            #expect(seen.compactMap { $0["key"]?.stringValue } == all.map(\.mutation.key))
            #expect(seen.contains { $0["payload"]?["device"]?.stringValue == "other" })

            let confined = try await client.execute(
                uri: "/v1/sync/changes?limit=1000", method: .get, headers: .bearer(backend.phone))
            let mine = confined.json?["changes"]?.arrayValue ?? []
            #expect(
                mine.allSatisfy {
                    $0["entity"]?.stringValue == "region" || $0["payload"]?["device"]?.stringValue == "phone"
                })
            #expect(
                mine.contains { $0["entity"]?.stringValue == "region" }
                    && mine.contains { $0["entity"]?.stringValue == "event" })

            let regions = try await client.execute(
                uri: "/v1/sync/changes?entity=region", method: .get, headers: .bearer(backend.reader))
            #expect(regions.json?["changes"]?.arrayValue?.count == 1)
            let bad = try await client.execute(
                uri: "/v1/sync/changes?cursor=abc", method: .get, headers: .bearer(backend.reader))
            #expect(bad.status == .badRequest)
            let readPush = try await client.execute(
                uri: "/v1/sync/mutations", method: .post, headers: .bearer(backend.reader),
                body: ByteBuffer(string: #"{"mutations":[]}"#))
            #expect(readPush.status == .forbidden)
            let malformed = try await client.execute(
                uri: "/v1/sync/mutations", method: .post, headers: .bearer(backend.admin),
                body: ByteBuffer(string: #"{"mutations":[{"key":"k"}]}"#))
            #expect(malformed.status == .unprocessableContent)
            #expect(malformed.json?["error"]?["message"]?.stringValue == "mutations[0] (k) needs \"entity\" and \"id\"")
        }
    }

    @Test("with sync.to configured, an edge service forwards what it ingests to the backend")
    func edgeForwards() async throws {
        let backend = try await ServiceFixture()
        defer { backend.cleanUp() }
        let edge = try await ServiceFixture()
        defer { edge.cleanUp() }
        try await backend.app().test(.live) { live in
            let configuration = ServiceConfiguration(
                sync: .init(to: "http://127.0.0.1:\(live.port!)", token: backend.admin))
            try await edge.app(configuration).test(.router) { client in
                let posted = try await client.execute(
                    uri: "/v1/devices/phone/locations", method: .post, headers: .bearer(edge.phone),
                    body: ByteBuffer(string: ServiceFixture.batchBody(ServiceFixture.walk())))
                #expect(posted.status == .ok)
                try await WebhookTests.eventually {
                    let counts = try await edge.store.syncStatus().counts
                    let events = try await Self.contents(backend.store).events.count
                    return counts[.pending] == 0 && counts[.inflight] == 0 && events == 2
                }
                await #expect(try Self.contents(backend.store) == Self.contents(edge.store))
                await #expect(try edge.store.syncStatus().counts[.delivered] == 5)  // the region, 2 events, a visit opened and closed
            }
        }
    }
}
