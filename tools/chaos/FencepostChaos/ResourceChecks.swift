import AsyncHTTPClient
import FencepostTestSupport
import Foundation
import GRDB
import NIOCore
import NIOHTTP1

#if canImport(Glibc)
    import Glibc
#endif

/// Starved resources: a full disk, a store locked by another process, ten thousand devices,
/// a thousand connections that send nothing.
struct ResourceChecks {
    let fencepost: String
    let work: URL
    let seed: UInt64
    let log: @Sendable (String) -> Void

    struct Result: Codable {
        var check: String
        /// Refused writes, held locks, devices, connections: what was done to the service.
        var faults = 0
        var lost = 0
        var crashes = 0
        var passed = true
        var figures: [String: Double] = [:]
        var notes: [String] = []

        init(check: String) { self.check = check }

        mutating func require(_ condition: Bool, _ note: String) {
            if !condition {
                passed = false
                notes.append("FAILED: " + note)
            }
        }
    }

    func fencepost(_ database: String) -> FencepostProcess {
        FencepostProcess(executable: fencepost, database: database)
    }

    /// The workload's regions in a file, and a CSV of its fixes for `devices` devices.
    func inputs(_ name: String, devices: Int, fixes: Int, seed: UInt64) throws -> (regions: String, trace: String) {
        let workload = Workload(devices: devices, fixesPerDevice: fixes, seed: seed, regions: 100)
        let regions = work.appendingPathComponent("\(name)-regions.geojson").path
        try Data(workload.regionsGeoJSON().utf8).write(to: URL(fileURLWithPath: regions))
        let trace = work.appendingPathComponent("\(name).csv").path
        try workload.writeCSV(trace)
        return (regions, trace)
    }

    // MARK: - A store locked by another process

    /// This process holds the store's write lock (BEGIN IMMEDIATE) while `ingest --busy-timeout
    /// 2` runs: it must wait, then exit 3 naming this process; once released, it must succeed.
    func locked() throws -> Result {
        var result = Result(check: "store locked by another process")
        let database = work.appendingPathComponent("locked.db").path
        let (regions, trace) = try inputs("locked", devices: 2, fixes: 300, seed: seed)
        try fencepost(database).succeed(["regions", "apply", regions])
        let holder = try DatabasePool(path: database)
        let waited = try holder.writeWithoutTransaction { db -> FencepostProcess.Result in
            try db.execute(sql: "BEGIN IMMEDIATE")
            defer { try? db.execute(sql: "ROLLBACK") }
            return try fencepost(database).run(["ingest", "--busy-timeout", "2", trace])
        }
        try holder.close()
        result.faults = 1
        result.figures["waited_seconds"] = (waited.seconds * 10).rounded() / 10
        result.notes.append(
            "ingest while locked: exit \(waited.status) after \(String(format: "%.1f", waited.seconds)) s: \(waited.stderr.trimmingCharacters(in: .whitespacesAndNewlines))"
        )
        result.require(waited.status == 3, "exit 3 while locked")
        result.require(waited.seconds >= 2, "waited the busy timeout")
        result.require(
            waited.stderr.contains("locked by pid \(getpid())"), "the message names the holder (pid \(getpid()))")
        let after = try fencepost(database).run(["ingest", trace])
        result.require(after.status == 0, "ingest succeeds once the lock is released (exit \(after.status))")
        return result
    }

    // MARK: - Ten thousand devices

    /// `devices` devices post a batch each, in turn, `rounds` times over (16 at a time): the
    /// service's resident memory is sampled as they come; it must level off, not grow with
    /// every new device.
    func manyDevices(_ devices: Int, rounds: Int) async throws -> Result {
        var result = Result(check: "\(devices) devices posting in turn")
        let database = work.appendingPathComponent("devices.db").path
        let workload = Workload(devices: 1, fixesPerDevice: 1, seed: seed, regions: 300)
        let regions = work.appendingPathComponent("devices-regions.geojson").path
        try Data(workload.regionsGeoJSON().utf8).write(to: URL(fileURLWithPath: regions))
        try fencepost(database).succeed(["regions", "apply", regions])
        let token = try fencepost(database).succeed(["tokens", "create", "--scope", "admin", "--name", "load"]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let served = try await Served.start(fencepost(database))
        let client = HTTPClient.shared
        let pid = served.process.processIdentifier
        var samples: [(devices: Int, rss: Double)] = []
        var failures = 0
        for round in 0..<rounds {
            for start in stride(from: 0, to: devices, by: 16) {
                try await withThrowingTaskGroup(of: Bool.self) { group in
                    for index in start..<min(start + 16, devices) {
                        group.addTask {
                            try await Self.post(
                                client: client, port: served.port, token: token, device: index, round: round)
                        }
                    }
                    for try await ok in group where !ok { failures += 1 }
                }
                if round == 0, (start + 16) % 1_000 < 16 { samples.append((start + 16, Self.memory(pid).rss)) }
            }
        }
        let memory = Self.memory(pid)
        try await served.stop()
        result.faults = devices * rounds
        result.figures["peak_rss_mib"] = memory.peak
        result.figures["rss_at_1000_devices_mib"] = samples.first?.rss ?? 0
        result.figures["rss_at_end_mib"] = memory.rss
        result.notes.append(
            "resident memory by devices seen: "
                + samples.map { "\($0.devices): \(String(format: "%.0f", $0.rss)) MiB" }.joined(separator: ", "))
        result.notes.append(
            "peak \(String(format: "%.0f", memory.peak)) MiB over \(devices * rounds) requests, \(failures) not answered 200"
        )
        result.require(failures == 0, "every request answered 200")
        result.crashes = served.process.terminationReason == .uncaughtSignal ? 1 : 0
        return result
    }

    static func post(client: HTTPClient, port: Int, token: String, device: Int, round: Int) async throws -> Bool {
        let base = Workload.start + Double(round * 60)
        let fixes = (0..<5).map { second in
            let point = Workload.degrees(
                x: Double(device % 100) * 40 - 2_000 + Double(second), y: Double(device / 100) * 40 - 2_000)
            return
                #"{"time":\#(Int(base) + second),"lat":\#(Workload.rounded(point.lat)),"lon":\#(Workload.rounded(point.lon)),"accuracy":5}"#
        }
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/v1/devices/phone-\(device)/locations")
        request.method = .POST
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        request.body = .bytes(ByteBuffer(string: #"{"fixes":["# + fixes.joined(separator: ",") + "]}"))
        let response = try await client.execute(request, timeout: .seconds(60))
        _ = try await response.body.collect(upTo: 1 << 20)
        return response.status == .ok
    }

    /// A process's resident and peak resident memory, MiB.
    static func memory(_ pid: Int32) -> (rss: Double, peak: Double) {
        let text = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        func field(_ name: String) -> Double {
            guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix(name + ":") }) else { return 0 }
            return (Double(line.split(separator: " ").dropFirst().first ?? "0") ?? 0) / 1024
        }
        return (field("VmRSS"), field("VmHWM"))
    }

    // MARK: - Idle connections

    /// `connections` connections to the service that send nothing: meanwhile other clients'
    /// requests must all be answered; after the idle timeout the service must have closed them.
    func idleConnections(_ connections: Int, idleTimeout: Double) async throws -> Result {
        var result = Result(check: "\(connections) idle connections")
        raiseDescriptorLimit()
        let database = work.appendingPathComponent("idle.db").path
        let token = try fencepost(database).succeed(["tokens", "create", "--scope", "admin", "--name", "load"]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let config = work.appendingPathComponent("idle.json").path
        try Data(#"{"idle_timeout_seconds":\#(idleTimeout)}"#.utf8).write(to: URL(fileURLWithPath: config))
        let served = try await Served.start(fencepost(database), config: config)
        let client = HTTPClient.shared

        let opened = Date()
        var sockets: [Int32] = []
        for _ in 0..<connections {
            guard let socket = Self.connect(port: served.port) else { break }
            sockets.append(socket)
        }
        result.faults = sockets.count
        result.require(sockets.count == connections, "opened \(sockets.count) of \(connections) connections")

        // While they hang: other clients are served.
        var answered = 0
        var asked = 0
        var slowest = 0.0
        while Date().timeIntervalSince(opened) < idleTimeout * 0.6 {
            asked += 1
            let started = Date()
            if try await Self.post(client: client, port: served.port, token: token, device: asked % 50, round: asked) {
                answered += 1
            }
            slowest = max(slowest, Date().timeIntervalSince(started))
        }
        result.figures["requests_answered_while_idle"] = Double(answered)
        result.figures["slowest_answer_ms"] = (slowest * 1000).rounded()
        result.require(
            answered == asked && asked > 0,
            "\(answered) of \(asked) requests answered while the idle connections were open")

        // After the timeout, each idle connection must have been closed by the service.
        try await Task.sleep(for: .seconds(max(0, idleTimeout * 1.5 - Date().timeIntervalSince(opened)) + 1))
        let closed = sockets.filter(Self.closedByPeer).count
        let seconds = Date().timeIntervalSince(opened)
        for socket in sockets { close(socket) }
        result.figures["closed_by_service"] = Double(closed)
        result.notes.append(
            "\(sockets.count) connections sending nothing; \(answered) of \(asked) other requests answered meanwhile (slowest \(Int(slowest * 1000)) ms); \(closed) closed by the service within \(Int(seconds)) s (idle_timeout_seconds \(idleTimeout))"
        )
        result.require(closed == sockets.count, "\(closed) of \(sockets.count) idle connections closed by the service")
        result.crashes = served.process.isRunning ? 0 : 1
        try await served.stop()
        return result
    }

    static func connect(port: Int) -> Int32? {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return nil }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            close(descriptor)
            return nil
        }
        return descriptor
    }

    /// Whether the other end closed the connection (a read finds its end, or a reset).
    static func closedByPeer(_ descriptor: Int32) -> Bool {
        var byte: UInt8 = 0
        let flags = fcntl(descriptor, F_GETFL)
        _ = fcntl(descriptor, F_SETFL, flags | O_NONBLOCK)
        let count = recv(descriptor, &byte, 1, 0)
        return count == 0 || (count < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
    }

    func raiseDescriptorLimit() {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
        limit.rlim_cur = limit.rlim_max
        setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }
}
