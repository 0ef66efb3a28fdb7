import ArgumentParser
import FencepostCore
import FencepostFormats
import FencepostStore
import Foundation

struct EventsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "events",
        abstract: "Read the event repository.",
        subcommands: [EventsExport.self])
}

struct EventsExport: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Export events (CSV, JSON Lines, GeoJSON) or visits (iCalendar), in time order.",
        discussion: """
            csv and jsonl: one event a row, times RFC 3339 UTC with milliseconds; --tz adds the local \
            time in an IANA time zone, such as Europe/Berlin. geojson: events as points where the \
            boundary was crossed, then visits with their region's geometry (without --kind). \
            ics: one calendar event per visit, open visits too. --since and --until take RFC 3339 \
            times (until is exclusive) and select visits by their enter time.
            """)

    @OptionGroup var store: StoreOptions

    @Option(help: "Output format: csv, jsonl, geojson or ics.")
    var format: ExportFormat = .csv

    @Option(help: "Only events at or after this time (RFC 3339).")
    var since: String?

    @Option(help: "Only events before this time (RFC 3339).")
    var until: String?

    @Option(help: "Only this device's events.")
    var device: String?

    @Option(help: "Only this region's events.")
    var region: String?

    @Option(help: "Only events of this kind (enter, exit, dwell; steps, sleep, workout… for health events).")
    var kind: String?

    @Option(help: "Add local times in this IANA time zone.")
    var tz: String?

    @Option(name: [.short, .long], help: "Write to this file instead of stdout.")
    var output: String?

    func validate() throws {
        if let kind, let problem = EventQuery.kindProblem(kind) { throw ValidationError("--kind: \(problem).") }
        for (name, value) in [("--since", since), ("--until", until)] {
            if let value, Timestamp.parse(value) == nil {
                throw ValidationError("\(name) is not an RFC 3339 time: \(value)")
            }
        }
        if let tz, TimeZone(identifier: tz) == nil { throw ValidationError("--tz: unknown time zone \(tz)") }
    }

    func run() async throws {
        try await CommandFailure.reporting {
            let query = EventQuery(
                since: since.flatMap(Timestamp.parse), until: until.flatMap(Timestamp.parse),
                device: device, region: region, kind: kind)
            let zone = tz.flatMap(TimeZone.init(identifier:))
            var sink = try OutputSink(path: output)
            try await EventExport.write(
                format, query: query, zone: zone, from: await store.open(createIfMissing: false), to: &sink)
            try sink.close()
        }
    }
}

extension ExportFormat: ExpressibleByArgument {}
