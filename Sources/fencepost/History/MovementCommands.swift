import ArgumentParser
import FencepostCore
import FencepostFormats
import FencepostStore
import Foundation

/// What `stops` and `trips` select, and how they bring the stored stops up to date first.
struct MovementSelection: ParsableArguments {
    @Option(help: "Only this device.")
    var device: String?

    @Option(help: "Only the devices of this roster group.")
    var group: String?

    @Option(help: "Only those ending at or after this time (RFC 3339, or a duration back from now: 30d, 12h).")
    var since: String?

    @Option(help: "Only those starting before this time (RFC 3339, or a duration back from now).")
    var until: String?

    @Flag(help: "Find them again from all stored fixes first (after fixes that came late).")
    var rebuild = false

    @Option(name: [.short, .long], help: "Write to this file instead of stdout.")
    var output: String?

    func validate() throws {
        try TimeArgument.check(("--since", since), ("--until", until))
    }

    var query: MovementQuery {
        MovementQuery(
            device: device, group: group, since: since.flatMap { TimeArgument.parse($0) },
            until: until.flatMap { TimeArgument.parse($0) })
    }

    /// Opens the store and takes each selected device's new stored fixes (or all, with
    /// --rebuild).
    func updatedStore(_ options: StoreOptions) async throws -> Store {
        let store = try await options.open(createIfMissing: false)
        try await store.updateMovement(of: device, rebuilding: rebuild)
        return store
    }
}

struct StopsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stops",
        abstract: "Where devices stayed, found from their stored fixes without any region.",
        discussion: """
            A stop: within 200 m of its centre for 3 minutes at least, found as `scan --stops` \
            finds them (see its help), from the fixes the store keeps. Stops are stored and \
            brought up to date with each read (and by serve's periodic job); a stop still going \
            on is `open`. csv and jsonl by start time; geojson as points; ics as calendar events.
            """)

    @OptionGroup var store: StoreOptions
    @OptionGroup var selection: MovementSelection

    @Option(help: "Output format: csv, jsonl, geojson or ics.")
    var format: ExportFormat = .csv

    func run() async throws {
        try await CommandFailure.reporting {
            let store = try await selection.updatedStore(self.store)
            var sink = try OutputSink(path: selection.output)
            var features = GeoJSONExport()
            switch format {
            case .csv: try sink.write(MovementExport.stopCSVHeader)
            case .geojson: try sink.write(GeoJSONExport.header)
            case .ics: try sink.write(ICSExport.text(ICSExport.header))
            case .jsonl: break
            }
            try await store.forEachStop(selection.query) { stop in
                switch format {
                case .csv: try sink.write(MovementExport.csvLine(stop))
                case .jsonl: try sink.write(MovementExport.jsonLine(stop))
                case .geojson: try sink.write(features.feature(MovementExport.feature(stop)))
                case .ics: try sink.write(ICSExport.text(MovementExport.vevent(stop)))
                }
            }
            switch format {
            case .geojson: try sink.write(GeoJSONExport.footer)
            case .ics: try sink.write(ICSExport.text(ICSExport.footer))
            default: break
            }
            try sink.close()
        }
    }
}

struct TripsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "trips",
        abstract: "The ways between stops: distance, duration, speeds, and the regions visited on the way.",
        discussion: """
            A trip runs from the last fix near one stop's centre to the first near the next's \
            (or to a silence of 12 hours): its distance fix to fix (jitter and single-fix spikes \
            left out), duration, top speed (over 10 s at least) and mean speed in km/h, the \
            stops it left and reached, and the regions the device had visits in meanwhile. \
            csv and jsonl by start time; geojson as lines from departure to arrival.
            """)

    enum Format: String, ExpressibleByArgument, CaseIterable { case csv, jsonl, geojson }

    @OptionGroup var store: StoreOptions
    @OptionGroup var selection: MovementSelection

    @Option(help: "Output format: csv, jsonl or geojson.")
    var format: Format = .csv

    func run() async throws {
        try await CommandFailure.reporting {
            let store = try await selection.updatedStore(self.store)
            var trips: [Trip] = []
            try await store.forEachTrip(selection.query) { trips.append($0) }
            let regions = try await store.regionsVisited(during: trips)
            var sink = try OutputSink(path: selection.output)
            var features = GeoJSONExport()
            switch format {
            case .csv: try sink.write(MovementExport.tripCSVHeader)
            case .geojson: try sink.write(GeoJSONExport.header)
            case .jsonl: break
            }
            for (trip, visited) in zip(trips, regions) {
                switch format {
                case .csv: try sink.write(MovementExport.csvLine(trip, regions: visited))
                case .jsonl: try sink.write(MovementExport.jsonLine(trip, regions: visited))
                case .geojson: try sink.write(features.feature(MovementExport.feature(trip, regions: visited)))
                }
            }
            if format == .geojson { try sink.write(GeoJSONExport.footer) }
            try sink.close()
        }
    }
}
