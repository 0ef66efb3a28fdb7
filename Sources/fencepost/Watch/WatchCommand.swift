import ArgumentParser
import FencepostCore
import FencepostFormats
import FencepostIngest
import FencepostService
import FencepostStore
import Foundation
import Logging

struct WatchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Import files dropped into an inbox folder, and keep the regions equal to a folder of configs.",
        discussion: """
            Inbox: a file is taken once it is complete (renamed into the folder, or its size and \
            modification time held for 2 s), oldest first; files already waiting go first. Traces \
            go to ingest (the options below apply), Apple Health exports (export.zip, export.xml) to \
            health import, told apart by content. Each file's content is imported at most once: \
            its SHA-256 is recorded in the store in the transaction of its events, so a restart, a \
            second watcher or the same file under another name imports nothing twice. Imported \
            files move to DIR/done/; refused ones to DIR/failed/, beside NAME.error.txt with the \
            file, line and reason ingest would print. Names starting with a dot or ending in .tmp, \
            .part, .partial, .crdownload or ~ are left alone: write there and rename in.

            Regions: whenever the folder's *.geojson files change (and have held still for 2 s), \
            the config is planned and applied, as `regions apply DIR` would; at start too. A config \
            the reconciler refuses keeps the monitored regions as they were, with every problem \
            logged; fixing the file applies it.

            One log line per file and per apply goes to stderr. SIGTERM or SIGINT finishes the file \
            being imported and exits 0. `serve` runs the same watcher with \
            "watch": {"inbox": "DIR", "regions": "DIR"} in its config.
            """)

    @OptionGroup var store: StoreOptions

    @Option(
        help: ArgumentHelp(
            "The folder to import files from (made, with done/ and failed/, when missing).", valueName: "dir"))
    var inbox: String?

    @Option(
        help: ArgumentHelp(
            "A folder of region configs (*.geojson) to keep the monitored regions equal to.", valueName: "dir"))
    var regions: String?

    @Option(
        help:
            "Input format of traces: auto (from the content), gpx, geojson, csv, takeout, timeline, plt, owntracks or tcx."
    )
    var format: TraceFormatChoice = .auto

    @OptionGroup var reader: ReaderOptions

    @Option(help: zonelessTimesHelp)
    var tz: String?

    @OptionGroup var monitor: MonitorOptions

    func validate() throws {
        guard inbox != nil || regions != nil else {
            throw ValidationError("Name an --inbox folder, a --regions folder, or both.")
        }
        if let regions {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: regions, isDirectory: &isDirectory), isDirectory.boolValue
            else {
                throw ValidationError("--regions: \(regions) is not a directory.")
            }
            if let inbox,
                URL(fileURLWithPath: inbox).standardizedFileURL == URL(fileURLWithPath: regions).standardizedFileURL
            {
                throw ValidationError("--inbox and --regions must be different folders.")
            }
        }
        _ = try ReaderOptions.zone(tz, option: "--tz")
    }

    func run() async throws {
        let store: Store = try await CommandFailure.reporting { try await self.store.open(poolAsService: true) }
        var logger = Logger(label: "fencepost")
        logger.logLevel =
            ProcessInfo.processInfo.environment["LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:)) ?? .info
        let options = FileImport.Options(
            reader: reader.options(zone: try ReaderOptions.zone(tz, option: "--tz")), format: format.format,
            ingest: IngestOptions(monitor: monitor.monitor, filter: monitor.filter))
        try await CommandFailure.reporting {
            try await runWatcher(
                store: store, folders: Watcher.Folders(inbox: inbox, regions: regions), options: options, logger: logger
            )
        }
    }
}
