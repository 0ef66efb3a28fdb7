import ArgumentParser
import FencepostCore
import FencepostFormats
import FencepostIngest
import Foundation

struct ScanCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scan",
        abstract: "Turn traces into geofence events or visits without a store.",
        discussion: """
            The same readers, filter and monitor as ingest, against regions read from config files \
            (or directories of *.geojson files) instead of the store: nothing is stored, nothing \
            is remembered between runs. The events (or, with --visits, the visits) go to stdout \
            or -o in an export format, with the columns and ids ingest into a fresh store and \
            `events export` (or `visits list`) would give, in the same order: events by time, \
            visits by enter time. The summary goes to stderr. A refused region config exits 1 \
            and writes nothing; a malformed trace is left out (file, line and reason on stderr), \
            the others are still scanned, and the exit code is 1. Fixes stream; events wait in \
            temporary files when there are very many, so memory stays flat.

            --stops and --trips need no regions: they write where each device stayed (a stop: \
            within --stop-radius for --stop-min-duration) and the ways between, by start time.
            """)

    @Option(
        name: .customLong("regions"),
        help: ArgumentHelp(
            "A region config file, or a directory of *.geojson files; repeat for more.", valueName: "path"))
    var regionPaths: [String] = []

    @Option(
        help: ArgumentHelp(
            "A roster file (CSV or JSON, as `devices apply` takes): the groups regions' `groups` select.",
            valueName: "file"))
    var roster: String?

    @Argument(help: ArgumentHelp("Trace files; - reads standard input.", valueName: "file"))
    var files: [String] = []

    @Option(
        help:
            "Output format: csv, jsonl or geojson (events, then the visits with their regions' shapes); ics for --stops."
    )
    var format: ScanFormat = .csv

    @Flag(help: "Write visits (one per stay, open ones too) instead of events.")
    var visits = false

    @Flag(help: "Write stops (stays at one place, found without regions) instead of events.")
    var stops = false

    @Flag(help: "Write trips (the ways between stops: distance, duration, speeds) instead of events.")
    var trips = false

    @OptionGroup var movement: MovementOptions

    @Option(name: [.short, .long], help: "Write to this file instead of stdout.")
    var output: String?

    @Option(help: "Add local times to csv and jsonl events in this IANA time zone, such as Europe/Berlin.")
    var tz: String?

    @Option(help: "Input format: auto (from the content), gpx, geojson, csv, takeout, timeline, plt, owntracks or tcx.")
    var inputFormat: TraceFormatChoice = .auto

    @OptionGroup var reader: ReaderOptions

    @Option(
        help: ArgumentHelp(
            "The IANA time zone of times written without a zone or offset in CSV and GeoJSON traces, such as 2020-06-30T00:05:00 (default: UTC; --tz is the output's zone).",
            valueName: "zone"))
    var inputTz: String?

    @OptionGroup var monitor: MonitorOptions

    enum ScanFormat: String, ExpressibleByArgument, CaseIterable {
        case csv, jsonl, geojson, ics
        var export: ExportFormat { ExportFormat(rawValue: rawValue)! }
    }

    var content: ScanOutput.Content {
        if stops { return .stops }
        if trips { return .trips }
        return visits ? .visits : .events
    }

    func validate() throws {
        guard [visits, stops, trips].filter({ $0 }).count <= 1 else {
            throw ValidationError("Choose one of --visits, --stops and --trips.")
        }
        guard !regionPaths.isEmpty || stops || trips else {
            throw ValidationError("Name the regions with --regions PATH (a file or a directory).")
        }
        guard format != .ics || stops else { throw ValidationError("--format ics is for --stops.") }
        guard !files.isEmpty else { throw ValidationError("Name at least one trace file (- for standard input).") }
        if let tz, TimeZone(identifier: tz) == nil { throw ValidationError("--tz: unknown time zone \(tz)") }
        _ = try ReaderOptions.zone(inputTz, option: "--input-tz")
    }

    func run() async throws {
        try await CommandFailure.reporting {
            let (regions, roster) = try RegionFiles.load(regionPaths, roster: roster)
            let scan = try TraceScan(
                regions: regions, roster: roster, monitor: monitor.monitor, filter: monitor.filter,
                output: ScanOutput(
                    content: content, format: format.export, zone: tz.flatMap(TimeZone.init(identifier:)),
                    movement: movement.settings))
            var feed = TraceFeed(
                format: inputFormat.format,
                options: reader.options(zone: try ReaderOptions.zone(inputTz, option: "--input-tz")))
            let refusals = try await feed.feed(
                files, to: { try scan.scan(batches: $0.openBatches()) }, skipped: scan.addSkipped)
            var sink = try OutputSink(path: output)
            try scan.finish(to: &sink)
            try sink.close()
            if refusals.taken > 0 { Console.error(IngestReport.lines(scan.summary, regions: scan.regionCount)) }
            if let failure = refusals.failure { throw failure }
        }
    }
}
