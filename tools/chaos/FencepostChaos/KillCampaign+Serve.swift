import AsyncHTTPClient
import FencepostTestSupport
import Foundation
import NIOCore
import NIOHTTP1
import Synchronization

extension KillCampaign {
    /// `serve` under a steady load: every device posts its batches one after another, all
    /// devices at once; the service is killed at a random moment. Right after the kill, every
    /// batch answered 200 must be in the store (its events, and its device's progress past
    /// its last fix); then the service restarts, each device re-posts from its first
    /// unanswered batch, and the store must end equal to a clean run's.
    func serve(devices: Int, fixesPerDevice: Int, batch: Int) async throws -> Result {
        let workload = Workload(devices: devices, fixesPerDevice: fixesPerDevice, seed: seed)
        let batches = workload.batches(of: batch)
        let template = try regionsTemplate("serve", workload)
        let token = try fencepost(template).succeed(["tokens", "create", "--scope", "admin", "--name", "chaos"]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let client = HTTPClient.shared

        // The clean run.
        let clean = try copy(template, to: "serve-clean.db")
        defer { remove(clean) }
        var served = try await Served.start(fencepost(clean))
        let load = Load(batches: batches, token: token, client: client, port: served.port)
        let started = Date()
        try await load.run()
        let loadSeconds = Date().timeIntervalSince(started)
        try await served.stop()
        let baseline = Baseline(
            template: template, contents: try StoreContents.read(clean), exports: try exports(clean),
            seconds: loadSeconds)
        log(
            "serve: clean run posted \(batches.values.map(\.count).reduce(0, +)) batches in \(String(format: "%.2f", loadSeconds)) s: \(baseline.contents.count("event")) events"
        )

        var result = Result(scenario: "serve")
        result.answeredLost = 0
        result.answeredBeforeKill = 0
        var random = SplitMix64(seed: seed)
        let began = Date()
        for trial in 1...trials {
            let database = try copy(template, to: "serve-trial.db")
            defer { remove(database) }
            served = try await Served.start(fencepost(database))
            let load = Load(batches: batches, token: token, client: client, port: served.port)
            let posting = Task { try await load.run() }
            try await Task.sleep(for: .seconds(moment(&random, of: loadSeconds)))
            let process = served.process
            let kill = try await offThePool { Killer.kill(process, store: database) }
            if !kill.landed { try await offThePool { process.waitUntilExit() } }
            served.output.remove()
            result.trials += 1
            if kill.landed { result.killsLanded += 1 }
            if kill.midTransaction { result.midTransaction += 1 }

            // What was answered before the kill must be in the store the kill left.
            let answered = load.answered()
            result.answeredBeforeKill! += answered.batches
            let integrity = try StoreContents.integrityCheck(database)
            if integrity != "ok" {
                result.integrityFailures += 1
                result.examples.append("trial \(trial): integrity_check: \(integrity)")
            }
            let left = try StoreContents.read(database)
            let missing = answered.missing(in: left)
            result.answeredLost! += missing.count
            if let first = missing.first { result.examples.append("trial \(trial): answered but missing: \(first)") }

            // The service comes back; the devices post what was not answered.
            served = try await Served.start(fencepost(database))
            load.moved(to: served.port)
            do {
                try await posting.value
            } catch {
                result.rerunFailures += 1
                result.examples.append("trial \(trial): the load failed after the restart: \(error)")
            }
            try await served.stop()
            result.add(try StoreContents.read(database).compared(to: baseline.contents))
            if try exports(database) != baseline.exports { result.exportsDiffering += 1 }
            log(
                "serve trial \(trial)/\(trials): \(kill.landed ? "killed" : "finished first")\(kill.midTransaction ? " mid-transaction" : ""), \(answered.batches) batches answered before, \(missing.count) of them missing; lost \(result.lost), duplicated \(result.duplicated)"
            )
        }
        result.seconds = Date().timeIntervalSince(began)
        return result
    }
}

/// Devices posting their batches to `fencepost serve`, each in order, all at once; a batch is
/// posted again until it is answered 200 (connection errors while the service is down are
/// retried every 100 ms, at whatever port it listens on now).
final class Load: Sendable {
    let batches: [String: [String]]
    let token: String
    let client: HTTPClient
    private let state: Mutex<State>

    struct State {
        var port: Int
        /// Per device: what each answered batch did.
        var answered: [String: [AnsweredBatch]] = [:]
    }

    struct AnsweredBatch: Sendable {
        var eventIDs: [String]
        /// The time of the batch's last fix, in ms.
        var lastFixMs: Int64
    }

    /// What had been answered at one moment.
    struct Answered {
        var batches = 0
        var events: [String: String] = [:]  // event id → device
        var lastFixMs: [String: Int64] = [:]

        /// Answered effects absent from `contents`: events missing, devices whose progress
        /// stops before an answered fix.
        func missing(in contents: StoreContents) -> [String] {
            var missing: [String] = []
            let events = contents.rows["event"] ?? [:]
            for (id, device) in self.events where events[id] == nil {
                missing.append("event \(id) of \(device)")
            }
            for (device, last) in lastFixMs {
                let anchor =
                    contents.rows["device"]?[device].flatMap { Int64($0.split(separator: "|").first ?? "") } ?? -1
                if anchor < last { missing.append("device \(device) at \(anchor), answered up to \(last)") }
            }
            return missing
        }
    }

    init(batches: [String: [String]], token: String, client: HTTPClient, port: Int) {
        self.batches = batches
        self.token = token
        self.client = client
        self.state = Mutex(State(port: port))
    }

    func moved(to port: Int) {
        state.withLock { $0.port = port }
    }

    func answered() -> Answered {
        state.withLock { state in
            var answered = Answered()
            for (device, list) in state.answered {
                answered.batches += list.count
                for batch in list { for id in batch.eventIDs { answered.events[id] = device } }
                if let last = list.last { answered.lastFixMs[device] = last.lastFixMs }
            }
            return answered
        }
    }

    /// How many batches have been answered 200 so far.
    func answeredBatches() -> Int {
        state.withLock { $0.answered.values.map(\.count).reduce(0, +) }
    }

    /// Posts every device's batches; returns when all are answered.
    func run() async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (device, list) in batches {
                group.addTask { try await self.post(list, device: device) }
            }
            try await group.waitForAll()
        }
    }

    private func post(_ list: [String], device: String) async throws {
        var next = 0
        var refusals = 0
        while next < list.count {
            let port = state.withLock { $0.port }
            var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/v1/devices/\(device)/locations")
            request.method = .POST
            request.headers.add(name: "Authorization", value: "Bearer \(token)")
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(string: list[next]))
            let status: UInt
            let body: ByteBuffer
            do {
                let response = try await client.execute(request, timeout: .seconds(60))
                status = response.status.code
                body = try await response.body.collect(upTo: 16 << 20)
            } catch {
                try await Task.sleep(for: .milliseconds(100))  // down: killed, or restarting
                continue
            }
            guard status == 200 else {
                refusals += 1
                guard status >= 500, refusals < 100 else {
                    throw FencepostProcess.Failure(
                        description: "device \(device) batch \(next): HTTP \(status): \(String(buffer: body))")
                }
                try await Task.sleep(for: .milliseconds(100))
                continue
            }
            let answer = try JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: Any]
            let ids = (answer?["events"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
            let last = Self.lastFixMs(list[next])
            state.withLock { $0.answered[device, default: []].append(AnsweredBatch(eventIDs: ids, lastFixMs: last)) }
            next += 1
        }
    }

    /// The time of a batch body's last fix (`"time":SECONDS`), in ms.
    static func lastFixMs(_ body: String) -> Int64 {
        guard let range = body.range(of: #""time":"#, options: .backwards) else { return 0 }
        let digits = body[range.upperBound...].prefix { $0.isNumber }
        return (Int64(digits) ?? 0) * 1000
    }
}
