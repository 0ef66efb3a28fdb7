import ArgumentParser
import FencepostCore
import FencepostFormats
import FencepostStore
import Foundation

struct SummaryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "summary",
        abstract: "Time sheets: time inside each region per device and day, week or month.",
        discussion: """
            Per device, region (or, with --tag, per tag) and period: the time inside, the visits \
            that touched the period, the first entry and the last exit within it. Periods are cut \
            at local midnight in --tz (ISO weeks, Monday first): a visit going on at midnight \
            counts to both days, and the second day's first entry is 00:00. An open visit counts \
            up to its device's last fix. With --tag, regions sharing the tag count overlapping \
            time once. Times in csv and jsonl are RFC 3339 in the zone; durations are seconds.
            """)

    enum Format: String, ExpressibleByArgument, CaseIterable { case table, csv, jsonl }

    @OptionGroup var store: StoreOptions

    @Option(help: "Period: day, week or month.")
    var by: Period = .day

    @Option(help: "Only this device.")
    var device: String?

    @Option(help: "Only the devices of this roster group.")
    var group: String?

    @Option(help: "Only this region.")
    var region: String?

    @Option(help: "Rows per tag instead of per region: only regions with this tag, summed as one.")
    var tag: String?

    @Option(help: "From this time on (RFC 3339, or a duration back from now: 30d, 12h).")
    var since: String?

    @Option(help: "Before this time (RFC 3339, or a duration back from now).")
    var until: String?

    @Option(help: "The IANA time zone whose midnights cut the periods, such as Europe/Zurich (default UTC).")
    var tz: String = "UTC"

    @Option(help: "Output format: table, csv or jsonl.")
    var format: Format = .table

    @Option(name: [.short, .long], help: "Write to this file instead of stdout.")
    var output: String?

    enum Period: String, ExpressibleByArgument, CaseIterable {
        case day, week, month
        var period: SummaryPeriod { SummaryPeriod(rawValue: rawValue)! }
    }

    func validate() throws {
        try TimeArgument.check(("--since", since), ("--until", until))
        guard TimeZone(identifier: tz) != nil else { throw ValidationError("--tz: unknown time zone \(tz)") }
        if let since, let until, let from = TimeArgument.parse(since), let to = TimeArgument.parse(until), from >= to {
            throw ValidationError("--since must come before --until")
        }
    }

    func run() async throws {
        try await CommandFailure.reporting {
            let zone = TimeZone(identifier: tz)!
            let from = since.flatMap { TimeArgument.parse($0) } ?? -.infinity
            let to = until.flatMap { TimeArgument.parse($0) } ?? .infinity
            let window = from..<to
            let store = try await store.open(createIfMissing: false)
            let (rows, names) = try await TimeSheetQuery(
                period: by.period, zone: zone, window: window, device: device, group: group, region: region, tag: tag
            ).rows(from: store)
            var sink = try OutputSink(path: output)
            try TimeSheetOutput(format: format, zone: zone, names: names).write(rows, to: &sink)
            try sink.close()
        }
    }
}
