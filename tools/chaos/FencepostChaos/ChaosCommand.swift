import ArgumentParser
import Foundation

/// Campaigns that prove Fencepost's promises under abuse (tools/chaos): kill -9 at random
/// moments, faults between sync or webhooks and their peers, and starved resources.
@main
struct ChaosCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fencepost-chaos",
        abstract: "Kill, fault and starve fencepost, and check that nothing is lost or duplicated.",
        subcommands: [KillCommand.self, FaultsCommand.self, ResourcesCommand.self, SinksCommand.self])
}

/// Options every campaign takes.
struct CampaignOptions: ParsableArguments {
    @Option(help: "The fencepost executable (default: the one beside this tool).")
    var fencepost: String?

    @Option(help: "A folder for the stores and inputs (default: a new temporary folder, removed at the end).")
    var work: String?

    @Option(help: "The seed of the random moments and the workload.")
    var seed: UInt64 = 1

    @Flag(help: "Print the figures as JSON on stdout (the progress still goes to stderr).")
    var json = false

    @Flag(help: "No progress lines on stderr.")
    var quiet = false

    var executable: String {
        fencepost
            ?? URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
            .deletingLastPathComponent().appendingPathComponent("fencepost").path
    }

    /// Runs `body` with the work folder, removing it afterwards unless it was given.
    func withWorkFolder<T>(_ body: (URL) async throws -> T) async throws -> T {
        let folder = URL(
            fileURLWithPath: work
                ?? FileManager.default.temporaryDirectory.appendingPathComponent("fencepost-chaos-\(UUID().uuidString)")
                .path)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { if work == nil { try? FileManager.default.removeItem(at: folder) } }
        guard FileManager.default.isExecutableFile(atPath: executable) else {
            throw ValidationError("no fencepost executable at \(executable) (--fencepost PATH)")
        }
        return try await body(folder)
    }

    var logger: @Sendable (String) -> Void {
        let quiet = quiet
        return { line in
            guard !quiet else { return }
            FileHandle.standardError.write(Data((line + "\n").utf8))
        }
    }
}

/// Prints `rows` under `header` as aligned columns.
func table(_ header: [String], _ rows: [[String]]) -> String {
    let widths = header.indices.map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
    return ([header] + rows).map { row in
        row.enumerated().map { column, cell in
            column == 0
                ? cell.padding(toLength: widths[column], withPad: " ", startingAt: 0)
                : String(repeating: " ", count: widths[column] - cell.count) + cell
        }.joined(separator: "  ")
    }.joined(separator: "\n")
}

func printJSON<T: Encodable>(_ value: T) throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    encoder.keyEncodingStrategy = .convertToSnakeCase
    print(String(decoding: try encoder.encode(value), as: UTF8.self))
}

struct KillCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "kill",
        abstract: "SIGKILL ingest, health import, serve and sync push at random moments; compare with clean runs.",
        discussion: """
            Each trial starts from a copy of a prepared store, kills the command after a random \
            share (2–98 %) of a clean run's duration — freezing it first (SIGSTOP) to see whether \
            it holds the store's write lock, so kills that landed mid-transaction are counted — \
            checks the file with PRAGMA integrity_check, runs the work again to its end, and \
            compares every event, visit, outbox row and device state, and the exports, with the \
            clean run's. serve is killed under load; the batches it answered 200 before the kill \
            must be in the store the kill left. Exit 1 when anything was lost, duplicated or \
            changed.
            """)

    @OptionGroup var options: CampaignOptions

    @Option(help: "Trials per scenario.")
    var trials = 50

    @Option(help: "Scenarios, comma-separated: ingest, health, serve, sync, mqtt (not run unless named).")
    var scenarios = "ingest,health,serve,sync"

    @Option(help: "Fixes in the ingested file.")
    var fixes = 1_000_000

    @Option(help: "Days of the Apple Health export.")
    var days = 365

    @Option(
        help: "The Apple Health export generator (default: ../shared/bench/gen_health_export.py beside the checkout).")
    var healthGenerator: String?

    @Option(help: "serve: devices posting at once, and fixes each posts.")
    var devices = 16
    @Option(help: "serve: fixes per device.")
    var deviceFixes = 4_000
    @Option(help: "serve: fixes per posted batch.")
    var batch = 50

    @Option(help: "mqtt: phones publishing OwnTracks locations once a second.")
    var mqttDevices = 100
    @Option(help: "mqtt: seconds the phones publish.")
    var mqttSeconds = 60
    @Option(help: "mqtt: times serve is SIGKILLed (the broker restarts once, half-way).")
    var mqttKills = 10

    @Option(help: "sync: about how many mutations to push.")
    var mutations = 100_000
    @Option(help: "sync: mutations per request.")
    var syncBatch = 500

    func validate() throws {
        guard trials >= 1, fixes >= 100, days >= 1, devices >= 1, deviceFixes >= 1, batch >= 1, mutations >= 100,
            syncBatch >= 1
        else {
            throw ValidationError("trials, sizes and batches must be positive.")
        }
        let unknown = Set(scenarios.split(separator: ",").map(String.init)).subtracting([
            "ingest", "health", "serve", "sync", "mqtt",
        ])
        guard unknown.isEmpty else {
            throw ValidationError("unknown scenarios: \(unknown.sorted().joined(separator: ", "))")
        }
    }

    func run() async throws {
        let wanted = scenarios.split(separator: ",").map(String.init)
        let results = try await options.withWorkFolder { work in
            let campaign = KillCampaign(
                fencepost: options.executable, work: work, trials: trials, seed: options.seed, log: options.logger)
            var results: [KillCampaign.Result] = []
            for scenario in wanted {
                switch scenario {
                case "ingest": results.append(try campaign.ingest(fixes: fixes))
                case "health":
                    let generator =
                        healthGenerator
                        ?? URL(fileURLWithPath: #filePath).deletingLastPathComponent()
                        .appendingPathComponent("../../../../shared/bench/gen_health_export.py").standardized.path
                    guard FileManager.default.fileExists(atPath: generator) else {
                        options.logger("health: skipped, no generator at \(generator) (--health-generator PATH)")
                        continue
                    }
                    results.append(try campaign.health(days: days, generator: generator))
                case "serve":
                    results.append(
                        try await campaign.serve(devices: devices, fixesPerDevice: deviceFixes, batch: batch))
                case "mqtt":
                    results.append(
                        try await campaign.mqtt(devices: mqttDevices, seconds: mqttSeconds, kills: mqttKills))
                default: results.append(try await campaign.sync(mutations: mutations, batch: syncBatch))
                }
            }
            return results
        }
        if options.json {
            try printJSON(results)
        } else {
            print(
                table(
                    [
                        "scenario", "trials", "kills landed", "mid-transaction", "integrity failures", "re-runs failed",
                        "lost", "duplicated", "changed", "exports differing", "seconds",
                    ],
                    results.map { result in
                        [
                            result.scenario, "\(result.trials)", "\(result.killsLanded)", "\(result.midTransaction)",
                            "\(result.integrityFailures)",
                            "\(result.rerunFailures)", "\(result.lost + (result.answeredLost ?? 0))",
                            "\(result.duplicated)", "\(result.changed)",
                            "\(result.exportsDiffering)", String(format: "%.0f", result.seconds),
                        ]
                    }))
            for result in results {
                if let answered = result.answeredBeforeKill {
                    print(
                        "\(result.scenario): \(answered) batches answered 200 before the kills, \(result.answeredLost ?? 0) of them missing after"
                    )
                }
                for example in result.examples { print("\(result.scenario): \(example)") }
            }
        }
        if results.contains(where: { !$0.passed }) { throw ExitCode(1) }
    }
}
