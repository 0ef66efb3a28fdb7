import AsyncHTTPClient
import FencepostServerTestSupport
import FencepostTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import Synchronization

/// The sync and webhook paths through a fault proxy that picks a random fault for each
/// request: dropped before forwarding, dropped after the peer applied it, 500, 429 with
/// Retry-After, a delay of 2–30 s past the client's timeout (forwarded afterwards, when the
/// client has given up), a reset in the middle of the answer's body.
struct FaultCampaign {
    let fencepost: String
    let work: URL
    let seed: UInt64
    let log: @Sendable (String) -> Void
    /// The clients' timeout: sync push's --timeout, the service's webhook_timeout_seconds.
    let clientTimeout = 2.0
    /// The longest delay past the client's timeout (at least 2 s).
    var maxDelay = 30.0

    struct Result: Codable {
        var path: String
        var requests = 0
        var faults: [String: Int] = [:]
        /// Rows (sync) or events (webhooks) the peer should have.
        var expected = 0
        var lost = 0
        var duplicated = 0
        /// sync: mutations applied more than once; webhooks: deliveries of an event already received.
        var appliedTwice = 0
        var redelivered = 0
        var deadLettered = 0
        var examples: [String] = []
        var seconds = 0.0

        init(path: String) { self.path = path }

        var passed: Bool { lost == 0 && duplicated == 0 && appliedTwice == 0 && deadLettered == 0 }
    }

    /// A fault picked at random, in these shares; a delay outlasts the client's timeout by 2 s
    /// to `maxDelay`.
    static func chooser(seed: UInt64, clientTimeout: Double, maxDelay: Double) -> @Sendable () -> ProxyFault {
        let random = Mutex(SplitMix64(seed: seed))
        return {
            random.withLock { random in
                let draw = random.unit()
                switch draw {
                case ..<0.62: return .pass
                case ..<0.69: return .dropBeforeForwarding
                case ..<0.76: return .dropAfterForwarding
                case ..<0.83: return .status(500)
                case ..<0.89: return .status(429, retryAfter: 1)
                case ..<0.93: return .delay(seconds: clientTimeout + 2 + random.unit() * max(0, maxDelay - 2))
                default: return .resetMidBody
                }
            }
        }
    }

    static func name(_ fault: ProxyFault) -> String {
        switch fault {
        case .pass: return "pass"
        case .dropBeforeForwarding: return "drop before forwarding"
        case .dropAfterForwarding: return "drop after forwarding"
        case .status(500, _): return "500"
        case .status(let code, _): return "\(code) with Retry-After"
        case .delay: return "delay past the timeout"
        case .resetMidBody: return "reset mid-body"
        }
    }

    func fencepost(_ database: String) -> FencepostProcess {
        FencepostProcess(executable: fencepost, database: database)
    }

    /// Waits until the proxy has finished every request, delayed ones included.
    func settle(_ proxy: FaultProxy) async throws {
        while proxy.inFlight > 0 { try await Task.sleep(for: .milliseconds(200)) }
    }

    func tally(_ proxy: FaultProxy, into result: inout Result) {
        let seen = proxy.seen
        result.requests = seen.count
        for fault in seen { result.faults[Self.name(fault), default: 0] += 1 }
    }

    // MARK: - Sync

    /// `sync push` of the client's queue (about `mutations` mutations, `batch` a request)
    /// through the proxy to a backend `fencepost serve`, run again until it exits 0: the backend
    /// must hold exactly the client's events and visits, every mutation applied once.
    func sync(mutations: Int, batch: Int) async throws -> Result {
        var result = Result(path: "sync push")
        // About one mutation (an event, or a visit version) per 10 fixes of this workload.
        let workload = Workload(devices: 20, fixesPerDevice: max(20, mutations / 2), seed: seed, regions: 300)
        let client = work.appendingPathComponent("faults-client.db").path
        let regions = work.appendingPathComponent("faults-regions.geojson").path
        try Data(workload.regionsGeoJSON().utf8).write(to: URL(fileURLWithPath: regions))
        let trace = work.appendingPathComponent("faults-trace.csv").path
        try workload.writeCSV(trace)
        try fencepost(client).succeed(["regions", "apply", regions])
        try fencepost(client).succeed(["ingest", trace])
        let queued = try StoreContents.read(client)
        result.expected = queued.count("outbox")
        log("sync: \(result.expected) mutations queued")

        let server = work.appendingPathComponent("faults-backend.db").path
        let token = try fencepost(server).succeed(["tokens", "create", "--scope", "admin", "--name", "edge"]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let backend = try await Served.start(fencepost(server))
        let proxy = try await FaultProxy.start(upstream: backend.url)
        proxy.choose(Self.chooser(seed: seed, clientTimeout: clientTimeout, maxDelay: maxDelay))
        let applied = AppliedCount()
        proxy.observeAnswers { _, answer in applied.count(answer) }

        let started = Date()
        var runs = 0
        while true {
            runs += 1
            let push = try await offThePool { [fencepost, clientTimeout] in
                try FencepostProcess(executable: fencepost, database: client).run([
                    "sync", "push", "--to", proxy.url, "--token", token, "--batch", String(batch),
                    "--timeout", String(clientTimeout), "--max-attempts", "100", "--give-up-after", "600",
                ])
            }
            log("sync: push \(runs) exited \(push.status) after \(proxy.seen.count) requests")
            if push.status == 0 { break }
            guard runs < 5 else {
                result.examples.append("sync push did not drain in 5 runs: \(push.stderr.suffix(300))")
                break
            }
        }
        try await settle(proxy)
        result.seconds = Date().timeIntervalSince(started)
        tally(proxy, into: &result)
        await proxy.stop()
        try await backend.stop()

        let held = try StoreContents.read(server)
        let difference = held.compared(to: queued, kinds: ["event", "visit"])
        result.lost += difference.lost
        result.duplicated += difference.duplicated + difference.changed
        result.examples += difference.examples
        let keys = Set((queued.rows["outbox"] ?? [:]).keys)
        let appliedKeys = try SyncLedger.appliedKeys(server)
        result.lost += keys.subtracting(appliedKeys).count
        result.duplicated += appliedKeys.subtracting(keys).count
        let counts = applied.counts()
        result.appliedTwice = counts.values.filter { $0 > 1 }.count
        result.deadLettered = try SyncLedger.undelivered(client)
        return result
    }

    // MARK: - Webhooks

    /// `fencepost serve` delivering every event it makes to a webhook through the proxy, while
    /// devices post their fixes to it (a webhook starts at the end of the outbox, so the
    /// events are made after it is configured): the receiver must see every event at least
    /// once and, deduplicated by id, exactly the store's events, each with the same body.
    func webhooks(events: Int) async throws -> Result {
        var result = Result(path: "webhooks")
        // About one event per 25 fixes of this workload.
        let workload = Workload(devices: 10, fixesPerDevice: max(20, events * 25 / 10), seed: seed &+ 1, regions: 300)
        let database = work.appendingPathComponent("webhooks.db").path
        let regions = work.appendingPathComponent("webhooks-regions.geojson").path
        try Data(workload.regionsGeoJSON().utf8).write(to: URL(fileURLWithPath: regions))
        try fencepost(database).succeed(["regions", "apply", regions])
        let token = try fencepost(database).succeed(["tokens", "create", "--scope", "admin", "--name", "devices"])
            .stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)

        let receiver = try await Receiver.start()
        let proxy = try await FaultProxy.start(upstream: receiver.url)
        proxy.choose(Self.chooser(seed: seed &+ 2, clientTimeout: clientTimeout, maxDelay: maxDelay))
        let config = work.appendingPathComponent("webhooks.json").path
        let settings =
            #"{"webhooks":[{"name":"chaos","url":"\#(proxy.url)/hook","secret":"s3cret"}],"webhook_max_attempts":1000,"webhook_timeout_seconds":\#(clientTimeout),"jobs":{"outbox_cleanup":false}}"#
        try Data(settings.utf8).write(to: URL(fileURLWithPath: config))
        let started = Date()
        let served = try await Served.start(fencepost(database), config: config)
        try await Load(batches: workload.batches(of: 50), token: token, client: .shared, port: served.port).run()
        let stored = try StoreContents.read(database).rows["event"] ?? [:]
        result.expected = stored.count
        log("webhooks: \(stored.count) events made from posted fixes")
        // Retries back off to 5 minutes: no new event for 15 minutes means delivery stopped.
        var reported = Date()
        var progressed = Date()
        var last = 0
        while receiver.distinct() < stored.count {
            try await Task.sleep(for: .milliseconds(200))
            guard served.process.isRunning else { break }
            if receiver.distinct() > last { (last, progressed) = (receiver.distinct(), Date()) }
            guard Date().timeIntervalSince(progressed) < 900 else {
                result.examples.append("no event received for 15 minutes; \(stored.count - last) never arrived")
                break
            }
            if Date().timeIntervalSince(reported) > 10 {
                reported = Date()
                log(
                    "webhooks: \(receiver.distinct()) of \(stored.count) events received after \(proxy.seen.count) requests"
                )
            }
        }
        log(
            "webhooks: \(receiver.distinct()) of \(stored.count) events received after \(proxy.seen.count) requests; waiting for delayed ones"
        )
        try await settle(proxy)
        result.seconds = Date().timeIntervalSince(started)
        try await served.stop()
        tally(proxy, into: &result)
        await proxy.stop()
        try await receiver.stop()

        let received = receiver.deliveries()
        var bodies: [String: String] = [:]
        for (id, body) in received {
            if let first = bodies[id] {
                result.redelivered += 1
                if first != body { result.examples.append("event \(id) delivered with two different bodies") }
            } else {
                bodies[id] = body
            }
        }
        result.lost = Set(stored.keys).subtracting(bodies.keys).count
        result.duplicated = Set(bodies.keys).subtracting(stored.keys).count
        result.deadLettered = try WebhookLedger.deadLetters(database)
        return result
    }
}

/// How many times the backend answered `applied` for each idempotency key.
final class AppliedCount: Sendable {
    private let state = Mutex<[String: Int]>([:])

    func count(_ answer: String) {
        guard let object = try? JSONSerialization.jsonObject(with: Data(answer.utf8)) as? [String: Any],
            let results = object["results"] as? [[String: Any]]
        else { return }
        state.withLock { counts in
            for item in results where item["result"] as? String == "applied" {
                if let key = item["key"] as? String { counts[key, default: 0] += 1 }
            }
        }
    }

    func counts() -> [String: Int] { state.withLock { $0 } }
}

/// A webhook receiver on 127.0.0.1: records every delivery's event id and body, answers 200.
final class Receiver: Sendable {
    private let received = Mutex<[(String, String)]>([])
    private let task: Mutex<Task<Void, any Error>?> = Mutex(nil)
    let port: Int

    var url: String { "http://127.0.0.1:\(port)" }

    private init(port: Int) { self.port = port }

    static func start() async throws -> Receiver {
        let (ports, portOut) = AsyncStream.makeStream(of: Int.self)
        let box = Mutex<Receiver?>(nil)
        let router = Router()
        router.post("/hook") { request, _ -> HTTPResponse.Status in
            let body = try await request.body.collect(upTo: 1 << 20)
            let id = request.headers[HTTPField.Name("X-Fencepost-Event-ID")!] ?? ""
            box.withLock { $0 }?.received.withLock { $0.append((id, String(buffer: body))) }
            return .ok
        }
        var logger = Logger(label: "receiver")
        logger.logLevel = .critical
        let app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in portOut.yield(channel.localAddress?.port ?? 0) }, logger: logger)
        let task = Task { try await app.runService(gracefulShutdownSignals: []) }
        var iterator = ports.makeAsyncIterator()
        let port = await iterator.next() ?? 0
        let receiver = Receiver(port: port)
        box.withLock { $0 = receiver }
        receiver.task.withLock { $0 = task }
        return receiver
    }

    func deliveries() -> [(String, String)] { received.withLock { $0 } }

    func distinct() -> Int { received.withLock { Set($0.map(\.0)).count } }

    func stop() async throws {
        let task = task.withLock { $0 }
        task?.cancel()
        _ = try? await task?.value
    }
}

enum WebhookLedger {
    static func deadLetters(_ path: String) throws -> Int {
        try StoreContents.count(path, "SELECT COUNT(*) FROM webhook_dead_letters")
    }
}
