import AsyncHTTPClient
import FencepostTestSupport
import Foundation
import NIOCore
import NIOHTTP1

/// Events out to a broker while both ends are abused: `serve` takes devices' fixes (posted
/// batches, each device in order) and delivers the events they make to one sink (Redis, NATS
/// JetStream or MQTT) through a broker of its own, started by the project's script; at random
/// points of the load the broker is restarted and `serve` is SIGKILLed and started again. An
/// independent consumer (redis-py, nats-py, paho-mqtt from tools/python) must then hold every
/// event of the store, each device's in the store's order; Redis and NATS each id once, MQTT
/// repeats only where a restart or a kill lies between the two copies.
struct SinkCampaign {
    let fencepost: String
    let work: URL
    let seed: UInt64
    let events: Int
    let devices: Int
    let batch: Int
    let brokerRestarts: Int
    let kills: Int
    let log: @Sendable (String) -> Void

    /// One sink's figures.
    struct Result: Codable {
        var sink: String
        /// Events in the store at the end.
        var events = 0
        var brokerRestarts = 0
        var kills = 0
        /// Messages the consumer got, repeats included.
        var received = 0
        /// Store events the consumer never got.
        var lost = 0
        /// Ids the consumer got that the store does not have.
        var unknown = 0
        /// Devices whose events (first copies) came in another order than the store's.
        var devicesOutOfOrder = 0
        /// Copies after the first of an id.
        var duplicates = 0
        /// MQTT: copies with no broker restart or kill between them and the first.
        var duplicatesWithoutRestart = 0
        var seconds = 0.0
        var examples: [String] = []

        init(sink: String) { self.sink = sink }

        var passed: Bool {
            events > 0 && lost == 0 && unknown == 0 && devicesOutOfOrder == 0 && duplicatesWithoutRestart == 0
                && (sink == "mqtt" || duplicates == 0)
        }
    }

    /// A broker restart or a kill: from when it began to when the broker or `serve` was back.
    struct Fault {
        var began: Double
        var ended: Double
    }

    static let tools = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    func fencepost(_ database: String) -> FencepostProcess {
        FencepostProcess(executable: fencepost, database: database)
    }

    func run(_ sink: String) async throws -> Result {
        let script = Self.tools.appendingPathComponent(sink == "mqtt" ? "mosquitto" : sink).path
        let broker = "chaos-sinks-\(seed)"
        _ = try? KillCampaign.tool(script, ["stop", broker])
        let url = try KillCampaign.tool(script, ["start", broker])
        defer { _ = try? KillCampaign.tool(script, ["stop", broker]) }
        let python = try KillCampaign.tool(Self.tools.appendingPathComponent("python").path, [])

        let database = work.appendingPathComponent("sinks-\(sink).db").path
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: database + suffix) }
        let regions = work.appendingPathComponent("sinks-row.geojson").path
        try Data(Self.regionsGeoJSON().utf8).write(to: URL(fileURLWithPath: regions))
        try fencepost(database).succeed(["regions", "apply", regions])
        let token = try fencepost(database).succeed(["tokens", "create", "--scope", "admin", "--name", "chaos"]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let config = work.appendingPathComponent("sinks-\(sink).json").path
        try Data(Self.configuration(sink, url: url).utf8).write(to: URL(fileURLWithPath: config))

        // The MQTT reader's persistent session exists before the first event is published.
        let reader = sink == "mqtt" ? try MQTTReader(python: python, url: url, work: work) : nil
        defer { reader?.stopNow() }

        let batches = Self.batches(events: events, devices: devices, batch: batch)
        let total = batches.values.map(\.count).reduce(0, +)
        log("\(sink): \(devices) devices post \(total) batches of \(batch) fixes to serve; broker at \(url)")
        var result = Result(sink: sink)
        let began = Date()
        var served = try await Served.start(fencepost(database), config: config)
        let load = Load(batches: batches, token: token, client: HTTPClient.shared, port: served.port)
        let posting = Task { try await load.run() }

        // The faults at random points of the load, in the order their points come.
        var random = SplitMix64(seed: seed &+ UInt64(sink.utf8.reduce(0) { $0 &* 31 &+ Int($1) }))
        let points =
            (Array(repeating: true, count: brokerRestarts) + Array(repeating: false, count: kills)).map { restart in
                (at: Int(Double(total) * (0.02 + 0.96 * random.unit())), restart: restart)
            }.sorted { $0.at < $1.at }
        var faults: [Fault] = []
        for point in points {
            while load.answeredBatches() < point.at { try await Task.sleep(for: .milliseconds(20)) }
            let start = Date().timeIntervalSince1970
            if point.restart {
                try await offThePool { _ = try KillCampaign.tool(script, ["restart", broker]) }
                result.brokerRestarts += 1
            } else {
                let process = served.process
                let outcome = try await offThePool { Killer.kill(process, store: database) }
                if !outcome.landed { try await offThePool { process.waitUntilExit() } }
                served.output.remove()
                served = try await Served.start(fencepost(database), config: config)
                load.moved(to: served.port)
                result.kills += 1
            }
            faults.append(Fault(began: start, ended: Date().timeIntervalSince1970))
            log(
                "\(sink): \(point.restart ? "broker restarted" : "serve killed and started again") at batch \(point.at) of \(total)"
            )
        }
        try await posting.value
        try await waitForSink(port: served.port, token: token, sink: sink)
        try await served.stop()

        let stored = try storedEvents(database)
        result.events = stored.count
        let received: [Received]
        switch sink {
        case "redis": received = try Consumers.redis(python: python, url: url)
        case "nats": received = try Consumers.nats(python: python, url: url)
        default: received = try await reader!.finish(expecting: stored.count)
        }
        Self.check(received, against: stored, faults: faults, into: &result)
        result.seconds = Date().timeIntervalSince(began)
        log(
            "\(sink): \(result.events) events, \(result.received) received, lost \(result.lost), out of order \(result.devicesOutOfOrder), duplicates \(result.duplicates)"
        )
        return result
    }

    /// Waits (at most 15 minutes) until `GET /v1/sinks` says the sink's lag is 0 rows.
    func waitForSink(port: Int, token: String, sink: String) async throws {
        let deadline = Date().addingTimeInterval(900)
        var last = ""
        while Date() < deadline {
            var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/v1/sinks")
            request.headers.add(name: "Authorization", value: "Bearer \(token)")
            if let response = try? await HTTPClient.shared.execute(request, timeout: .seconds(10)),
                let body = try? await response.body.collect(upTo: 1 << 20),
                let object = try? JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: Any],
                let first = (object["sinks"] as? [[String: Any]])?.first
            {
                last = "\(first)"
                if (first["lag_rows"] as? NSNumber)?.intValue == 0 { return }
            }
            try await Task.sleep(for: .milliseconds(500))
        }
        throw FencepostProcess.Failure(description: "\(sink): the sink did not catch up in 15 minutes: \(last)")
    }

    /// The store's events, in its order: (id, device).
    func storedEvents(_ database: String) throws -> [(id: String, device: String)] {
        try fencepost(database).succeed(["events", "export", "--format", "jsonl"]).stdout.split(separator: "\n")
            .compactMap { line in
                guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                    let id = object["id"] as? String, let device = object["device"] as? String
                else { return nil }
                return (id, device)
            }
    }

    /// What a consumer got: each copy of an event, in the order it came, with when (MQTT).
    struct Received {
        var id: String
        var device: String
        var at: Double?
    }

    static func check(
        _ received: [Received], against stored: [(id: String, device: String)], faults: [Fault],
        into result: inout Result
    ) {
        result.received = received.count
        var seen: Set<String> = []
        var firstAt: [String: Double] = [:]
        var order: [String: [String]] = [:]
        for copy in received {
            guard seen.insert(copy.id).inserted else {
                result.duplicates += 1
                let between = faults.contains { fault in
                    guard let earlier = firstAt[copy.id], let now = copy.at else { return true }
                    return fault.began <= now && fault.ended >= earlier
                }
                if !between {
                    result.duplicatesWithoutRestart += 1
                    if result.examples.count < 10 { result.examples.append("\(copy.id) again, no restart between") }
                }
                continue
            }
            firstAt[copy.id] = copy.at
            order[copy.device, default: []].append(copy.id)
        }
        var expected: [String: [String]] = [:]
        let storedIDs = Set(stored.map(\.id))
        for event in stored {
            expected[event.device, default: []].append(event.id)
            if !seen.contains(event.id) {
                result.lost += 1
                if result.examples.count < 10 { result.examples.append("\(event.id) of \(event.device) never came") }
            }
        }
        result.unknown = seen.subtracting(storedIDs).count
        for (device, ids) in expected {
            let got = order[device] ?? []
            let wanted = ids.filter { seen.contains($0) }
            guard got != wanted else { continue }
            result.devicesOutOfOrder += 1
            if let index = (0..<min(got.count, wanted.count)).first(where: { got[$0] != wanted[$0] }),
                result.examples.count < 10
            {
                result.examples.append("\(device): at \(index) came \(got[index]), the store has \(wanted[index])")
            }
        }
    }
}
