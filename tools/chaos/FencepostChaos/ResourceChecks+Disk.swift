import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

#if canImport(Glibc)
    import Glibc
#endif

extension ResourceChecks {
    /// A store on a small tmpfs that fills up while `ingest` and `serve` write to it: both must
    /// say the disk is full (exit 3, 503 `disk_full`), keep everything committed before, stay
    /// up, and work again once space is freed; `serve` refuses to start on a full disk.
    /// Needs to mount a tmpfs: as root, or inside `unshare --user --map-root-user --mount`.
    func fullDisk(sizeKiB: Int = 4_096) async throws -> Result {
        var result = Result(check: "full disk (tmpfs)")
        let mountPoint = work.appendingPathComponent("disk").path
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        let mount = try Self.run("/bin/mount", ["-t", "tmpfs", "-o", "size=\(sizeKiB)k", "tmpfs", mountPoint])
        guard mount.status == 0 else {
            throw FencepostProcess.Failure(description: "cannot mount a tmpfs: \(mount.output)")
        }
        defer { _ = try? Self.run("/bin/umount", [mountPoint]) }
        let database = mountPoint + "/store.db"
        let filler = mountPoint + "/filler"
        let cli = fencepost(database)
        let first = try inputs("disk-first", devices: 5, fixes: 200, seed: seed)
        let second = try inputs("disk-second", devices: 20, fixes: 600, seed: seed &+ 1)
        try cli.succeed(["regions", "apply", first.regions])
        try cli.succeed(["ingest", first.trace])
        let token = try cli.succeed(["tokens", "create", "--scope", "admin", "--name", "disk"]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let committed = try StoreContents.read(database)

        var served = try await Served.start(cli)
        let client = HTTPClient.shared
        var poster = DiskPoster(client: client, token: token)
        result.require(try await poster.post(port: served.port) == 200, "a batch is answered before the disk fills")

        let free = try Self.fill(filler)
        result.notes.append("filled the tmpfs (\(sizeKiB) KiB) with \(free / 1024) KiB of filler")

        let refused = try cli.run(["ingest", second.trace])
        result.faults += 1
        result.notes.append(
            "ingest on the full disk: exit \(refused.status): \(refused.stderr.split(separator: "\n").last ?? "")")
        result.require(refused.status == 3, "ingest exits 3 on a full disk")
        result.require(refused.stderr.contains("disk full"), "ingest says the disk is full")

        var statuses: [UInt] = []
        var codes: Set<String> = []
        for _ in 0..<200 {
            let status = try await poster.post(port: served.port)
            statuses.append(status)
            if status != 200 {
                codes.insert(poster.lastCode)
                break
            }
        }
        result.faults += statuses.filter { $0 != 200 }.count
        result.notes.append(
            "serve on the full disk: \(statuses.filter { $0 == 200 }.count) batches answered 200 (room left in its log), then \(statuses.last.map(String.init) ?? "-") \(codes.sorted().joined(separator: ","))"
        )
        result.require(statuses.last == 503 && codes == ["disk_full"], "serve answers 503 disk_full")
        result.require(served.process.isRunning, "serve is still running")

        try FileManager.default.removeItem(atPath: filler)
        var recovered = false
        for _ in 0..<50 where !recovered {
            recovered = try await poster.post(port: served.port) == 200
            if !recovered { try await Task.sleep(for: .milliseconds(100)) }
        }
        result.require(recovered, "serve answers 200 again once space is freed")
        let again = try cli.run(["ingest", second.trace])
        result.require(
            again.status == 0,
            "ingest works again once space is freed (exit \(again.status): \(again.stderr.suffix(200)))")
        result.crashes += served.process.isRunning ? 0 : 1
        try await served.stop()

        // Nothing committed or answered before was lost.
        let integrity = try StoreContents.integrityCheck(database)
        result.require(integrity == "ok", "integrity_check \(integrity)")
        let now = try StoreContents.read(database)
        let lostEvents = Set((committed.rows["event"] ?? [:]).keys).union(poster.answeredEvents).subtracting(
            (now.rows["event"] ?? [:]).keys)
        let anchor =
            now.rows["device"]?[DiskPoster.device].flatMap { Int64($0.split(separator: "|").first ?? "") } ?? -1
        result.lost = lostEvents.count + (anchor < poster.answeredUpToMs ? 1 : 0)
        result.require(result.lost == 0, "everything committed or answered before is kept")

        // A service started on a full disk says so.
        _ = try Self.fill(filler)
        let start = try Self.runBriefly(cli, ["serve", "--port", "0"], seconds: 20)
        result.faults += 1
        result.notes.append(
            "serve started on the full disk: exit \(start.status): \(start.stderr.split(separator: "\n").last ?? "")")
        result.require(
            start.status == 3 && start.stderr.contains("disk full"),
            "serve refuses to start on a full disk, saying so, exit 3")
        try FileManager.default.removeItem(atPath: filler)
        served = try await Served.start(cli)
        result.require(try await poster.post(port: served.port) == 200, "serve starts and answers once space is freed")
        try await served.stop()
        return result
    }

    /// Writes zeros to `path` until the disk is full; the bytes written.
    static func fill(_ path: String) throws -> Int {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw FencepostProcess.Failure(description: "cannot create \(path)") }
        defer { close(descriptor) }
        let chunk = [UInt8](repeating: 0, count: 4096)
        var total = 0
        while true {
            let written = chunk.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            guard written > 0 else { break }
            total += written
        }
        return total
    }

    /// Runs `fencepost ARGUMENTS` expecting it to end within `seconds`; stopped (SIGTERM) if not.
    static func runBriefly(_ cli: FencepostProcess, _ arguments: [String], seconds: Double) throws
        -> FencepostProcess.Result
    {
        let output = try TemporaryOutput()
        defer { output.remove() }
        let process = try cli.start(arguments, output: output)
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning, Date() < deadline { usleep(50_000) }
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
            return FencepostProcess.Result(
                status: -1, stdout: output.stdout(), stderr: "still running after \(Int(seconds)) s", seconds: seconds)
        }
        return FencepostProcess.Result(
            status: process.terminationStatus, stdout: output.stdout(), stderr: output.stderr(), seconds: 0)
    }

    static func run(_ executable: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }
}

/// One device posting a batch of fixes at a time, remembering what was answered.
struct DiskPoster {
    static let device = "disk-phone"
    let client: HTTPClient
    let token: String
    var next = 0
    var answeredEvents: Set<String> = []
    var answeredUpToMs: Int64 = -1
    var lastCode = ""

    /// Posts the next batch (the same again after a refusal); the status.
    mutating func post(port: Int) async throws -> UInt {
        let fixes = (0..<50).map { index -> String in
            let second = next * 50 + index
            let point = Workload.degrees(x: Double(second % 4_000) - 2_000, y: 300 * sin(Double(second) / 200))
            return
                #"{"time":\#(Int(Workload.start) + second),"lat":\#(Workload.rounded(point.lat)),"lon":\#(Workload.rounded(point.lon)),"accuracy":5}"#
        }
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/v1/devices/\(Self.device)/locations")
        request.method = .POST
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        request.body = .bytes(ByteBuffer(string: #"{"fixes":["# + fixes.joined(separator: ",") + "]}"))
        let response = try await client.execute(request, timeout: .seconds(60))
        let body = try await response.body.collect(upTo: 1 << 20)
        let answer = (try? JSONSerialization.jsonObject(with: Data(body.readableBytesView))) as? [String: Any]
        if response.status == .ok {
            for event in answer?["events"] as? [[String: Any]] ?? [] {
                if let id = event["id"] as? String { answeredEvents.insert(id) }
            }
            answeredUpToMs = (Int64(Workload.start) + Int64(next * 50 + 49)) * 1000
            next += 1
        } else {
            lastCode = ((answer?["error"] as? [String: Any])?["code"] as? String) ?? "HTTP \(response.status.code)"
        }
        return response.status.code
    }
}
