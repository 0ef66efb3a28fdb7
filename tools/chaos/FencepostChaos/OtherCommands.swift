import ArgumentParser
import Foundation

struct FaultsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "faults",
        abstract: "Sync and webhooks through a proxy injecting random faults; check exactly-once effects.",
        discussion: """
            sync push sends a client's queue (small batches, 2 s timeout) through the proxy to a \
            backend fencepost serve, and is run again until it exits 0; the backend must end with \
            exactly the client's events and visits, every mutation applied once (counted from the \
            backend's answers, including those the proxy then dropped). A fencepost serve delivers \
            its events to a webhook through the proxy; the receiver must see every event at least \
            once and, deduplicated by id, exactly the store's events. Faults, each request: drop \
            before forwarding, drop the answer after the peer applied it, 500, 429 with Retry-After, \
            a delay 2–30 s past the client's timeout, a reset mid-body (38 % of requests in all).
            """)

    @OptionGroup var options: CampaignOptions

    @Option(help: "Mutations in the client's queue (sync pushes them 10 to a request).")
    var mutations = 8_000
    @Option(help: "Mutations per sync request.")
    var batch = 10
    @Option(help: "About how many events the webhook is sent.")
    var events = 500
    @Option(help: "The longest delay past the client's timeout, seconds (at least 2).")
    var maxDelay = 30.0

    func validate() throws {
        guard mutations >= 10, batch >= 1, events >= 1, maxDelay >= 2 else {
            throw ValidationError("mutations, batch and events must be positive, --max-delay at least 2.")
        }
    }

    func run() async throws {
        let results = try await options.withWorkFolder { work in
            let campaign = FaultCampaign(
                fencepost: options.executable, work: work, seed: options.seed, log: options.logger, maxDelay: maxDelay)
            return [
                try await campaign.sync(mutations: mutations, batch: batch),
                try await campaign.webhooks(events: events),
            ]
        }
        if options.json {
            try printJSON(results)
        } else {
            print(
                table(
                    [
                        "path", "requests", "faults", "expected", "lost", "duplicated", "applied twice", "redelivered",
                        "dead-lettered", "seconds",
                    ],
                    results.map { result in
                        [
                            result.path, "\(result.requests)", "\(result.requests - (result.faults["pass"] ?? 0))",
                            "\(result.expected)", "\(result.lost)",
                            "\(result.duplicated)", "\(result.appliedTwice)", "\(result.redelivered)",
                            "\(result.deadLettered)", String(format: "%.0f", result.seconds),
                        ]
                    }))
            for result in results {
                print(
                    "\(result.path) faults: "
                        + result.faults.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(
                            separator: ", "))
                for example in result.examples { print("\(result.path): \(example)") }
            }
        }
        if results.contains(where: { !$0.passed }) { throw ExitCode(1) }
    }
}

struct ResourcesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "resources",
        abstract: "A full disk, a locked store, many devices, idle connections.",
        discussion: """
            disk: a store on a small tmpfs fills up under ingest and serve (needs root, or runs \
            itself again inside unshare --user --map-root-user --mount). lock: ingest waits for \
            a write lock this tool holds, then names it. devices: --devices devices post in turn; \
            the service's memory is sampled. idle: --connections connections send nothing while \
            others are served; the service must close them after its idle timeout.
            """)

    @OptionGroup var options: CampaignOptions

    @Option(help: "Checks, comma-separated: disk, lock, devices, idle.")
    var checks = "disk,lock,devices,idle"
    @Option(help: "Devices posting in turn.")
    var devices = 10_000
    @Option(help: "Rounds of posts, each device once a round.")
    var rounds = 3
    @Option(help: "Idle connections.")
    var connections = 1_000
    @Option(help: "The service's idle_timeout_seconds for the idle check.")
    var idleTimeout = 5.0

    static let namespaceMarker = "FENCEPOST_CHAOS_IN_NAMESPACE"

    func run() async throws {
        let wanted = checks.split(separator: ",").map(String.init)
        let results = try await options.withWorkFolder { work in
            let checks = ResourceChecks(
                fencepost: options.executable, work: work, seed: options.seed, log: options.logger)
            var results: [ResourceChecks.Result] = []
            for check in wanted {
                options.logger("resources: \(check)")
                switch check {
                case "disk": results.append(try await diskCheck(checks, work: work))
                case "lock": results.append(try checks.locked())
                case "devices": results.append(try await checks.manyDevices(devices, rounds: rounds))
                case "idle": results.append(try await checks.idleConnections(connections, idleTimeout: idleTimeout))
                default: throw ValidationError("unknown check \(check)")
                }
            }
            return results
        }
        if options.json {
            try printJSON(results)
        } else {
            print(
                table(
                    ["check", "faults", "lost", "crashes", "result"],
                    results.map {
                        ["\($0.check)", "\($0.faults)", "\($0.lost)", "\($0.crashes)", $0.passed ? "ok" : "FAILED"]
                    }))
            for result in results {
                for (name, value) in result.figures.sorted(by: { $0.key < $1.key }) {
                    print("\(result.check): \(name) \(value)")
                }
                for note in result.notes { print("\(result.check): \(note)") }
            }
        }
        if results.contains(where: { !$0.passed || $0.lost > 0 || $0.crashes > 0 }) { throw ExitCode(1) }
    }

    /// The disk check, here when this process may mount a tmpfs, else in a child of this tool
    /// inside a user and mount namespace of its own.
    private func diskCheck(_ checks: ResourceChecks, work: URL) async throws -> ResourceChecks.Result {
        if getuid() == 0 || ProcessInfo.processInfo.environment[Self.namespaceMarker] != nil {
            return try await checks.fullDisk()
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
        process.arguments = [
            "--user", "--map-root-user", "--mount", CommandLine.arguments[0], "resources", "--checks", "disk", "--json",
            "--fencepost", options.executable, "--work", work.appendingPathComponent("namespace").path,
        ]
        process.environment = ProcessInfo.processInfo.environment.merging([Self.namespaceMarker: "1"]) { _, new in new }
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        guard let result = (try? decoder.decode([ResourceChecks.Result].self, from: data))?.first else {
            throw ValidationError(
                "the disk check needs root or unprivileged user namespaces (unshare --user --map-root-user --mount)")
        }
        return result
    }
}
