import ArgumentParser
import FencepostCore
import FencepostFormats
import FencepostHealth
import FencepostIngest
import FencepostStore
import Foundation

struct HealthCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "health",
        abstract: "Import Apple Health exports as health events beside the geofence events.",
        subcommands: [HealthImport.self, HealthSources.self])
}

struct HealthImport: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Import an Apple Health export (export.zip, or an unpacked export.xml).",
        discussion: """
            The export is read as a stream (the zip in place, nothing unpacked to disk). Steps, \
            distance, active energy and water become one event per local day (the day of each \
            record's own UTC offset); where several sources recorded the same minutes, the \
            better-ranked source present counts (--source-priority) and nothing is counted twice. \
            Sleep becomes one event per night, body mass, BMI, blood pressure and heart-rate \
            summaries one event per measurement, each workout one event; workout routes go through \
            the monitor like any trace (device = the route's source), so they make geofence events.

            Import is incremental: each kind keeps an anchor (the newest record it imported), so \
            importing the same export again adds nothing, and a newer export adds what is new and \
            updates the daily totals that changed (an update in the outbox, not a duplicate). \
            Events and anchors commit in one transaction; routes are ingested first, and re-running \
            after a crash converges. A malformed export (truncated zip, broken XML, an unknown date \
            format) is refused with where and why, and nothing of it is written.
            """)

    @OptionGroup var store: StoreOptions

    @Argument(help: ArgumentHelp("export.zip or export.xml.", valueName: "file"))
    var file: String

    @Option(help: "Leave out records before this date (YYYY-MM-DD, UTC, or an RFC 3339 time).")
    var since: String?

    @Option(
        help:
            "Kinds to import, comma-separated: \(HealthEventKind.allCases.map(\.selectionName).joined(separator: ",")).",
        transform: Self.kinds)
    var types: Set<HealthEventKind>?

    @Option(help: "Sources in priority order, comma-separated; a source ranks by the first name it contains.")
    var sourcePriority: String = SourcePriority.standard.patterns.joined(separator: ",")

    @Option(help: "Whose export this is: the device of its events.")
    var owner: String = "me"

    @Flag(help: "Print the summary as JSON on stdout.")
    var json = false

    func validate() throws {
        _ = try options()
    }

    func options() throws -> HealthImportOptions {
        var options = HealthImportOptions(
            owner: owner, priority: SourcePriority(patterns: sourcePriority.split(separator: ",").map(String.init)))
        if let since {
            guard let instant = Timestamp.parse(since) ?? Timestamp.parse(since + "T00:00:00Z") else {
                throw ValidationError("--since takes a date (2023-01-14) or an RFC 3339 time, not \"\(since)\".")
            }
            options.since = instant
        }
        if let types { options.kinds = types }
        return options
    }

    /// Parses `--types` once, as the argument is read.
    private static func kinds(_ text: String) throws -> Set<HealthEventKind> {
        var kinds: Set<HealthEventKind> = []
        for name in text.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) {
            guard let kind = HealthEventKind(selectionName: name) else {
                throw ValidationError(
                    "Unknown kind \"\(name)\" in --types; known: \(HealthEventKind.allCases.map(\.selectionName).joined(separator: ", "))."
                )
            }
            kinds.insert(kind)
        }
        return kinds
    }

    func run() async throws {
        try await CommandFailure.reporting {
            let options = try options()
            let store = try await store.open()
            do {
                var progress = Progress()
                let outcome = try await HealthExportImport.run(path: file, store: store, options: options) {
                    document, items, source in
                    progress.update("\(document): \(items) items, \(Self.percent(source))")
                }
                progress.clear()
                // Without a file to record, every import commits.
                guard let outcome else { return }
                try report(outcome.read, outcome.committed, outcome.routes)
            } catch let error as TraceReadError where error.unreadable {
                throw CommandFailure.io("error: \(error)")
            } catch let error as TraceReadError {
                throw CommandFailure.invalidInput(["error: \(error) (nothing of the export was written)"])
            }
        }
    }

    private static func percent(_ source: ByteSource) -> String {
        guard let size = source.size, size > 0 else { return "\(source.bytesRead >> 20) MiB" }
        return "\(source.bytesRead * 100 / size) %"
    }

    private func report(_ read: HealthReadSummary, _ committed: HealthCommitSummary, _ routes: IngestSummary?) throws {
        if json {
            Console.output(try JSONValueEncoder.canonicalText(ImportJSON(read, committed, routes)))
            return
        }
        func list(_ counts: [String: Int]) -> String {
            counts.isEmpty
                ? "none" : counts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        }
        var lines = [
            "read: \(read.records) records, \(read.correlations) correlations, \(read.workouts) workouts, \(read.activitySummaries) activity summaries",
            "new records: \(list(Dictionary(uniqueKeysWithValues: read.new.map { ($0.selectionName, $1) })))",
            "skipped: \(list(read.skipped))",
            "events created: \(list(committed.created)); updated: \(list(committed.updated)); unchanged: \(committed.unchanged)",
        ]
        if let routes {
            lines.append(
                "routes: \(routes.fixesRead) fixes read, \(routes.fixesAccepted) accepted, geofence events: \(list(Dictionary(uniqueKeysWithValues: routes.events.map { ($0.rawValue, $1) })))"
            )
        }
        Console.error(lines)
    }
}

struct HealthSources: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sources", abstract: "List the sources of the last health import, with their record counts.")

    @OptionGroup var store: StoreOptions

    @Option(help: "Whose imports.")
    var owner: String = "me"

    @Option(help: "Output format: table or json.")
    var format: TableOrJSON = .table

    func run() async throws {
        try await CommandFailure.reporting {
            let sources = try await store.open(createIfMissing: false).healthSources(owner: owner)
            switch format {
            case .table:
                Console.output(
                    Table.render(header: ["SOURCE", "RECORDS"], rows: sources.map { [$0.source, String($0.records)] }))
            case .json:
                Console.output(
                    try JSONValueEncoder.canonicalText(
                        sources.map { SourceJSON(source: $0.source, records: $0.records) }))
            }
        }
    }
}

/// `health import --json`.
private struct ImportJSON: Encodable {
    struct Routes: Encodable {
        var fixes: Int
        var accepted: Int
        var events: [String: Int]
    }

    var records: Int
    var correlations: Int
    var workouts: Int
    var activitySummaries: Int
    var skipped: [String: Int]
    var newRecords: [String: Int]
    var created: [String: Int]
    var updated: [String: Int]
    var unchanged: Int
    /// When the export had workout routes.
    var routes: Routes?

    enum CodingKeys: String, CodingKey {
        case records, correlations, workouts
        case activitySummaries = "activity_summaries"
        case skipped
        case newRecords = "new_records"
        case created, updated, unchanged, routes
    }

    init(_ read: HealthReadSummary, _ committed: HealthCommitSummary, _ routes: IngestSummary?) {
        records = read.records
        correlations = read.correlations
        workouts = read.workouts
        activitySummaries = read.activitySummaries
        skipped = read.skipped
        newRecords = Dictionary(uniqueKeysWithValues: read.new.map { ($0.selectionName, $1) })
        created = committed.created
        updated = committed.updated
        unchanged = committed.unchanged
        self.routes = routes.map {
            Routes(fixes: $0.fixesRead, accepted: $0.fixesAccepted, events: $0.events.byRawValue)
        }
    }
}

/// `health sources --format json`: one per source.
private struct SourceJSON: Encodable {
    var source: String
    var records: Int
}
