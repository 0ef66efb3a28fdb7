import ArgumentParser
import FencepostCore
import FencepostFormats
import FencepostStore
import Foundation

struct IngestCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ingest",
        abstract: "Turn location traces into geofence events and visits.",
        discussion: """
            Formats: GPX 1.0/1.1 (Apple's hAcc as accuracy), GeoJSON (timed Points, LineStrings with \
            coordTimes), CSV with a header, Google Takeout Records.json, Google Maps Timeline exported \
            from the phone (Android's Timeline.json, iOS's location-history.json: the raw signals' \
            positions, and the timeline paths where no raw position lies within 15 minutes; Google's \
            own visits are not read), GeoLife .plt, OwnTracks .rec and TCX; gzip-compressed files \
            too. The format is detected from the content. \
            Each file is read as a stream, filtered (bad coordinates, poor accuracy, duplicates, \
            teleports, fixes already seen), run through the monitor against the monitored regions, \
            and committed in one transaction with its events, visits, outbox rows and the devices' \
            anchors. Feeding the same file twice changes nothing; a visit open at the end of one \
            file is closed by the next file for the same device. A malformed file is refused whole \
            (file, line and reason on stderr); the other files are still ingested and the exit code \
            is 1. The summary goes to stderr (--json puts it on stdout); on a terminal, progress too. \
            Per-region properties override the run's --hysteresis, --enter-delay and --exit-delay.
            """)

    @OptionGroup var store: StoreOptions

    @Argument(help: ArgumentHelp("Trace files; - reads standard input.", valueName: "file"))
    var files: [String]

    @Option(help: "Device id for every fix (default: the file's device or track name, else the file name).")
    var device: String?

    @Option(help: "Input format: auto (from the content), gpx, geojson, csv, takeout, timeline, plt, owntracks or tcx.")
    var format: FormatChoice = .auto

    @Option(help: "Hysteresis band in metres (0 turns it off). Given, it is used as is; by default 20 m widened by each fix's accuracy.")
    var hysteresis: Double?

    @Option(help: "Seconds an enter must hold before it is confirmed.")
    var enterDelay: Double = MonitorSettings().enterDelay

    @Option(help: "Seconds an exit must hold before it is confirmed.")
    var exitDelay: Double = MonitorSettings().exitDelay

    @Option(help: "Widen the hysteresis band to this many times a fix's reported accuracy when that is larger (0: off; default 3, or 0 with --hysteresis).")
    var accuracyBandFactor: Double?

    @Option(help: "A fix deeper inside than this many times its accuracy confirms an enter at once.")
    var deepEntryFactor: Double = MonitorSettings().deepEntryFactor

    @Option(help: "A pass-through counts when it goes deeper than this many times the fixes' accuracy (0: any).")
    var passThroughDepthFactor: Double = MonitorSettings().passThroughDepthFactor

    @Option(help: "Seconds between fixes beyond which crossing times are not interpolated.")
    var maxGap: Double = MonitorSettings().maxGap

    @Option(help: "Fixes with a reported accuracy worse than this many metres are dropped.")
    var maxAccuracy: Double = FixFilterSettings().maxAccuracy

    @Option(help: "Fixes implying a speed above this many m/s are dropped as teleports.")
    var maxSpeed: Double = FixFilterSettings().maxSpeed

    @Flag(help: "Do not report regions crossed between two fixes that are both outside.")
    var noPassThrough = false

    @Flag(help: "Print the summary as JSON on stdout.")
    var json = false

    enum FormatChoice: String, ExpressibleByArgument, CaseIterable {
        case auto, gpx, geojson, csv, takeout, timeline, plt, owntracks, tcx
        var format: TraceFormat? { TraceFormat(rawValue: rawValue) }
    }

    func validate() throws {
        guard !files.isEmpty else { throw ValidationError("Name at least one trace file (- for standard input).") }
        for (name, value) in [("--hysteresis", hysteresis ?? 0), ("--enter-delay", enterDelay), ("--exit-delay", exitDelay)] where !(value >= 0) {
            throw ValidationError("\(name) must be 0 or more.")
        }
        for (name, value) in [("--max-gap", maxGap), ("--max-accuracy", maxAccuracy), ("--max-speed", maxSpeed)] where !(value > 0) {
            throw ValidationError("\(name) must be greater than 0.")
        }
    }

    var options: IngestOptions {
        var monitor = MonitorSettings()
        if let hysteresis {
            monitor.hysteresis = hysteresis
            monitor.accuracyBandFactor = 0
        }
        monitor.enterDelay = enterDelay
        monitor.exitDelay = exitDelay
        monitor.maxGap = maxGap
        monitor.passThrough = !noPassThrough
        if let accuracyBandFactor { monitor.accuracyBandFactor = accuracyBandFactor }
        monitor.deepEntryFactor = deepEntryFactor
        monitor.passThroughDepthFactor = passThroughDepthFactor
        return IngestOptions(monitor: monitor, filter: FixFilterSettings(maxAccuracy: maxAccuracy, maxSpeed: maxSpeed))
    }

    func run() async throws {
        try CommandFailure.reporting {
            let session = try IngestSession(store: store.open(), options: options)
            var refused: [String] = []
            var progress = Progress()
            for file in files {
                do {
                    try ingest(file, into: session, progress: &progress)
                } catch let error as TraceReadError {
                    progress.clear()
                    refused.append("error: \(error) (nothing of it was written)")
                }
            }
            let summary = session.summary
            if json {
                Console.output(IngestReport.json(summary, regions: session.regionCount).canonicalText())
            } else {
                Console.error(IngestReport.lines(summary, regions: session.regionCount))
            }
            if !refused.isEmpty { throw CommandFailure.invalidInput(refused) }
        }
    }

    private func ingest(_ file: String, into session: IngestSession, progress: inout Progress) throws {
        let source = try ByteSource(path: file)
        let (format, device) = (format.format, device)
        // Parsing runs on its own thread, ahead of the monitor and the store.
        let reader = PrefetchingReader { () throws(TraceReadError) in try TraceOpener.open(source, format: format, device: device) }
        var count = 0
        try session.ingest { add in
            while let fix = try reader.next() {
                try add(fix)
                count += 1
                if count & 0xFFFF == 0 { progress.update(Self.progressLine(file, source, count)) }
            }
        }
        progress.clear()
        session.addSkipped(reader.skipped)
    }

    static func progressLine(_ file: String, _ source: ByteSource, _ fixes: Int) -> String {
        let megabytes = Double(source.bytesRead) / 1_048_576
        guard let size = source.size, size > 0 else {
            return "\(file): \(fixes) fixes, \(String(format: "%.0f", megabytes)) MB"
        }
        let percent = min(100, Double(source.bytesRead) * 100 / Double(size))
        return "\(file): \(String(format: "%.0f", percent))% (\(fixes) fixes)"
    }
}
