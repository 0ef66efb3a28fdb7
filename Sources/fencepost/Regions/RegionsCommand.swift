import ArgumentParser
import FencepostCore
import FencepostFormats
import FencepostStore
import Foundation

struct RegionsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "regions",
        abstract: "Manage the monitored geofences from GeoJSON region configs.",
        discussion: """
            A region config is a GeoJSON FeatureCollection in WGS84 lon/lat. A directory stands for \
            the union of its *.geojson files. Regions are matched by id: `plan` shows what `apply` \
            would add, update and remove; `apply` makes the store match the files in one \
            transaction. An invalid config is refused whole, with every problem on stderr.
            """,
        subcommands: [RegionsPlan.self, RegionsApply.self, RegionsList.self, RegionsImport.self]
    )
}

/// The paths and output format `plan` and `apply` share.
struct RegionConfigArguments: ParsableArguments {
    @Argument(help: ArgumentHelp("Region config files or directories of *.geojson files.", valueName: "path"))
    var paths: [String]

    @Option(help: "Output format: text (one line per change and a summary) or json.")
    var format: PlanFormat = .text

    func validate() throws {
        guard !paths.isEmpty else { throw ValidationError("Name at least one region config file or directory.") }
    }

    /// The desired regions, or every problem on stderr and exit code 1 (3 when a named file
    /// could not be opened at all).
    func loadRegions() throws -> [Region] {
        try reportingProblems { () throws(RegionConfigError) in try RegionConfigLoader.load(paths) }
    }

    /// The desired regions with those the store last applied from the same text recognised
    /// (``RegionConfigLoader/desired(_:sources:parser:)``); problems as ``loadRegions()``.
    func loadDesired(sources: RegionSourceIndex) throws -> DesiredRegions {
        try reportingProblems { () throws(RegionConfigError) in
            try RegionConfigLoader.desired(paths, sources: sources)
        }
    }

    private func reportingProblems<T>(_ load: () throws(RegionConfigError) -> T) throws -> T {
        do {
            return try load()
        } catch {
            let unopenable = error.issues.contains { issue in
                guard case .unreadable = issue.problem else { return false }
                return !FileManager.default.isReadableFile(atPath: issue.file)
            }
            let lines = RegionPlanOutput.issueLines(error)
            throw unopenable ? CommandFailure.io(lines.joined(separator: "\n")) : CommandFailure.invalidInput(lines)
        }
    }
}

struct RegionsPlan: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "plan",
        abstract: "Show how the monitored regions differ from the config; change nothing.")

    @OptionGroup var store: StoreOptions
    @OptionGroup var config: RegionConfigArguments

    @Option(
        help: ArgumentHelp(
            "A trace to replay through the monitored and the planned regions: per changed region, the visits the edit adds, removes and changes (text format). Repeat for more. Or a time (RFC 3339, or a duration back from now: 30d) to replay every device's stored fixes since then.",
            valueName: "trace|since"))
    var replay: [String] = []

    func run() async throws {
        try await CommandFailure.reporting {
            // Features the store last applied from the same text are recognised, not read again.
            if replay.isEmpty, let known = await StoredRegionSources(store) {
                let desired = try config.loadDesired(sources: known.sources)
                if let plan = try await (known.store ?? Store.inMemory()).planRegions(desired) {
                    Console.error(RegionPlanOutput.outlierWarnings(desired.boxes))
                    Console.output(RegionPlanOutput.render(plan, format: config.format))
                    return
                }
            }
            let desired = try config.loadRegions()
            // A store not made yet monitors nothing: every region is an add, and nothing is created.
            let store = try await self.store.openIfPresent() ?? Store.inMemory()
            let plan = try await store.planRegions(desired)
            Console.error(RegionPlanOutput.outlierWarnings(desired))
            var text = RegionPlanOutput.render(plan, format: config.format)
            if !replay.isEmpty, config.format == .text {
                do {
                    text +=
                        "\n"
                        + (try await RegionPlanReplay.lines(
                            plan: plan, current: try await store.monitoredRegions().map(\.region), planned: desired,
                            roster: try await store.roster(), source: .parse(replay, store: store))).joined(
                            separator: "\n")
                } catch let error as TraceReadError {
                    throw error.unreadable
                        ? CommandFailure.io("error: \(error)") : CommandFailure.invalidInput(["error: \(error)"])
                }
            }
            Console.output(text)
        }
    }
}

struct RegionsApply: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apply",
        abstract: "Make the monitored regions match the config, in one transaction.",
        discussion: """
            Removing or disabling a region, or changing its geometry, closes its open visits. \
            With --backfill SINCE, the changed regions' events and visits from SINCE on are \
            then rewritten from the stored fixes as the new set would have made them (a \
            region added today gets last month's visits), each change with its outbox row so \
            consumers converge; rows that come out alike keep their ids and send nothing.
            """)

    @OptionGroup var store: StoreOptions
    @OptionGroup var config: RegionConfigArguments

    @Option(
        help: ArgumentHelp(
            "After applying, rewrite the changed regions' events and visits from this time on (RFC 3339, or a duration back from now: 30d) from the stored fixes.",
            valueName: "since"))
    var backfill: String?

    func validate() throws {
        try TimeArgument.check(("--backfill", backfill))
    }

    func run() async throws {
        try await CommandFailure.reporting {
            // Features the store last applied from the same text are recognised, not read
            // again; the others are stored with their text's fingerprint. The store is made
            // only once the config is found valid.
            if let known = await StoredRegionSources(store) {
                let desired = try config.loadDesired(sources: known.sources)
                // Worked out while the apply writes, printed after it: a million regions' boxes
                // took a second more once the apply had committed.
                let warnings = Task { RegionPlanOutput.outlierWarnings(desired.boxes) }
                var target = known.store
                if target == nil { target = try await store.open() }
                if let target, let plan = try await target.applyRegions(desired) {
                    Console.error(await warnings.value)
                    try await finish(plan, store: target)
                    return
                }
            }
            let desired = try config.loadRegions()
            let store = try await store.open()
            let plan = try await store.applyRegions(desired)
            Console.error(RegionPlanOutput.outlierWarnings(desired))
            try await finish(plan, store: store)
        }
    }

    private func finish(_ plan: RegionPlan, store: Store) async throws {
        Console.output(RegionPlanOutput.render(plan, format: config.format))
        if let since = backfill.flatMap({ TimeArgument.parse($0) }) {
            Console.output(try await RegionBackfill.run(plan: plan, store: store, since: since))
        }
    }
}
