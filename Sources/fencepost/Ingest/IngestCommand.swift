import ArgumentParser
import FencepostCore
import FencepostFormats
import FencepostIngest
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
            A file may hold a fleet: each fix's device comes from a CSV device column (device, \
            device_id, vehicle_id, mmsi, tid, or --device-column), a GeoJSON feature's device \
            property (or --device-property), an OwnTracks record's user/device or tid; rows of \
            all devices may interleave, and the summary counts fixes and events per device. CSV \
            times without a zone are UTC unless --tz names theirs. \
            Each file is read as a stream, filtered (bad coordinates, poor accuracy, duplicates, \
            teleports, fixes already seen, times outside 1970-01-01 to 2100-01-01, counted as \
            time_out_of_range), run through the monitor against the monitored regions, \
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

    @Option(help: "Input format: auto (from the content), gpx, geojson, csv, takeout, timeline, plt, owntracks or tcx.")
    var format: TraceFormatChoice = .auto

    @OptionGroup var reader: ReaderOptions

    @Option(help: zonelessTimesHelp)
    var tz: String?

    @OptionGroup var monitor: MonitorOptions

    @Flag(help: "Print the summary as JSON on stdout.")
    var json = false

    @Flag(help: "Keep no fix in the store's history (`fencepost track`): events and visits only.")
    var noHistory = false

    func validate() throws {
        guard !files.isEmpty else { throw ValidationError("Name at least one trace file (- for standard input).") }
        _ = try ReaderOptions.zone(tz, option: "--tz")
    }

    var options: IngestOptions {
        var options = IngestOptions(monitor: monitor.monitor, filter: monitor.filter)
        options.keepsHistory = !noHistory
        return options
    }

    func run() async throws {
        try await CommandFailure.reporting {
            let session = try await IngestSession(store: store.open(), options: options)
            if session.regionCount == 0 { Console.error([IngestReport.noRegionsNote]) }
            var feed = TraceFeed(
                format: format.format, options: reader.options(zone: try ReaderOptions.zone(tz, option: "--tz")))
            let refusals = try await feed.feed(
                files,
                to: { input in
                    if input.rereadable {
                        try await session.ingest(rereading: input.open)
                    } else {
                        try await session.ingest(input.open())
                    }
                }, skipped: session.addSkipped)
            if json {
                Console.output(
                    try JSONValueEncoder.canonicalText(IngestReport.JSON(session.summary, regions: session.regionCount))
                )
            } else if refusals.taken > 0 {
                // No summary of nothing: when no file could be taken, the errors say it all.
                Console.error(IngestReport.lines(session.summary, regions: session.regionCount))
            }
            if let failure = refusals.failure { throw failure }
        }
    }
}
