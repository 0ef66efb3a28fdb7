import ArgumentParser
import FencepostCore
import FencepostFormats
import FencepostStore
import Foundation

struct HistoryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history",
        abstract: "The store's history of fixes: its size, its retention, and pruning.",
        discussion: """
            Every accepted fix is kept (fencepost track, where), for history_days (default 365; \
            0 keeps none), a setting of the store that every process using it follows: an \
            ingest stores no fix older than that, and `fencepost serve` deletes the hours that \
            grow older once an hour. Without a service, run `fencepost history prune` (from \
            cron, say).
            """,
        subcommands: [HistoryStatus.self, HistoryRetention.self, HistoryPrune.self])
}

struct HistoryStatus: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status", abstract: "Fixes kept, bytes per fix, first and last fix, retention.")

    @OptionGroup var store: StoreOptions

    @Option(help: "Only this device.")
    var device: String?

    @Option(help: "Output format: table or json.")
    var format: TableOrJSON = .table

    func run() async throws {
        try await CommandFailure.reporting {
            let store = try await store.open(createIfMissing: false)
            let stats = try await store.historyStats(device: device)
            let days = try await store.historyDays()
            let devices = device == nil ? try await store.historyDevices().count : 1
            let perFix = stats.fixes == 0 ? 0 : Double(stats.bytes) / Double(stats.fixes)
            switch format {
            case .table:
                Console.output(
                    [
                        "fixes         \(stats.fixes)",
                        "devices       \(devices)",
                        "chunks        \(stats.chunks)",
                        "bytes         \(stats.bytes) (\(TrackWriter.decimal(perFix, places: 2)) per fix, encoded)",
                        "first         \(stats.first.map { Timestamp.format(seconds: $0) } ?? "-")",
                        "last          \(stats.last.map { Timestamp.format(seconds: $0) } ?? "-")",
                        "history_days  \(days)",
                    ].joined(separator: "\n"))
            case .json:
                let json = JSONValue.object([
                    "fixes": .number(Double(stats.fixes)), "devices": .number(Double(devices)),
                    "chunks": .number(Double(stats.chunks)), "bytes": .number(Double(stats.bytes)),
                    "first": stats.first.map { .string(Timestamp.format(seconds: $0)) } ?? .null,
                    "last": stats.last.map { .string(Timestamp.format(seconds: $0)) } ?? .null,
                    "history_days": .number(Double(days)),
                ])
                Console.output(json.canonicalText())
            }
        }
    }
}

struct HistoryRetention: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "retention",
        abstract: "Print the store's retentions, or set them: history_days, events_days, visits_days.",
        discussion: """
            history_days (default 365; 0 keeps none) is how long fixes are kept. events_days and \
            visits_days are unset by default (events and visits kept for ever); set, the prune \
            (serve hourly, or fencepost history prune) deletes events older than that and closed \
            visits that ended longer ago, sending nothing: a synced backend keeps what it was \
            sent. `forever` unsets one.
            """)

    @OptionGroup var store: StoreOptions

    @Option(help: "Days of fixes to keep (0 keeps none).")
    var days: Int?

    @Option(help: "Days of events to keep, or forever.")
    var eventsDays: String?

    @Option(help: "Days of closed visits to keep (by their exit), or forever.")
    var visitsDays: String?

    func validate() throws {
        if let days, !(0...36_500).contains(days) { throw ValidationError("--days must be from 0 to 36500") }
        for (name, value) in [("--events-days", eventsDays), ("--visits-days", visitsDays)] {
            if let value, Self.retention(value) == nil {
                throw ValidationError("\(name) must be a number of days from 1 to 36500, or forever: \(value)")
            }
        }
    }

    /// A number of days, or forever (nil inside); nil outside for anything else.
    static func retention(_ text: String) -> Int?? {
        if text == "forever" { return .some(nil) }
        guard let days = Int(text), (1...36_500).contains(days) else { return nil }
        return .some(days)
    }

    func run() async throws {
        try await CommandFailure.reporting {
            let changing = days != nil || eventsDays != nil || visitsDays != nil
            let store = try await store.open(createIfMissing: changing)
            if let days { try await store.setHistoryDays(days) }
            if let eventsDays, let value = Self.retention(eventsDays) {
                try await store.setRetentionDays(.events, value)
            }
            if let visitsDays, let value = Self.retention(visitsDays) {
                try await store.setRetentionDays(.visits, value)
            }
            let events = try await store.retentionDays(.events).map(String.init) ?? "forever"
            let visits = try await store.retentionDays(.visits).map(String.init) ?? "forever"
            Console.output(
                "history_days \(try await store.historyDays())\nevents_days \(events)\nvisits_days \(visits)")
        }
    }
}

struct HistoryPrune: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "prune",
        abstract: "Delete the stored hours older than history_days (and events and visits past their retention).")

    @OptionGroup var store: StoreOptions

    func run() async throws {
        try await CommandFailure.reporting {
            let store = try await store.open(createIfMissing: false)
            let deleted = try await store.pruneHistory()
            Console.error(["history: \(deleted) fixes older than \(try await store.historyDays()) days deleted"])
            let (events, visits) = try await store.pruneEventsAndVisits()
            if let days = try await store.retentionDays(.events) {
                Console.error(["events: \(events) older than \(days) days deleted"])
            }
            if let days = try await store.retentionDays(.visits) {
                Console.error(["visits: \(visits) closed more than \(days) days ago deleted"])
            }
        }
    }
}
