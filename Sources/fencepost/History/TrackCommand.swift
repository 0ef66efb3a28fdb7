import ArgumentParser
import FencepostCore
import FencepostFormats
import FencepostStore
import Foundation

struct TrackCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "track",
        abstract: "Print a device's stored fixes (its history) as GeoJSON, GPX or CSV.",
        discussion: """
            The fixes every ingest, service post and inbox file accepted, as the store keeps \
            them (coordinates to 1e-7 degrees, times to the millisecond), in time order. \
            --since and --until take RFC 3339 times (or durations back from now, such as 30d) and both include their time. Fixes inside \
            regions marked "privacy": true were never stored, nor were those of ingest \
            --no-history; the store keeps history_days of them (fencepost history).
            """)

    @OptionGroup var store: StoreOptions

    @Argument(help: "The device.")
    var device: String

    @Option(help: "Only fixes at or after this time (RFC 3339, or a duration back from now: 30d).")
    var since: String?

    @Option(help: "Only fixes at or before this time (RFC 3339, or a duration back from now).")
    var until: String?

    @Option(help: "Output format: geojson, gpx or csv.")
    var format: TrackFormat = .geojson

    @Option(name: [.short, .long], help: "Write to this file instead of stdout.")
    var output: String?

    func validate() throws {
        try TimeArgument.check(("--since", since), ("--until", until))
        if let since, let until, let from = TimeArgument.parse(since), let to = TimeArgument.parse(until), from > to {
            throw ValidationError("--since \(since) is after --until \(until)")
        }
    }

    func run() async throws {
        try await CommandFailure.reporting {
            let store = try await store.open(createIfMissing: false)
            try await HistoryTimes.requireHistory(of: device, in: store)
            var sink = try OutputSink(path: output)
            var writer = TrackWriter(format: format, device: device)
            try sink.write(writer.start)
            try await store.readTrack(
                device: device, since: since.flatMap { TimeArgument.parse($0) },
                until: until.flatMap { TimeArgument.parse($0) }
            ) { fixes in try sink.write(writer.add(fixes)) }
            try sink.write(writer.end)
            try sink.close()
        }
    }
}

extension TrackFormat: ExpressibleByArgument {}

/// What the history commands share.
enum HistoryTimes {
    /// Refuses a device the history holds nothing for (exit 1), naming the devices it does.
    static func requireHistory(of device: String, in store: Store) async throws {
        guard try await store.historyStats(device: device).fixes == 0 else { return }
        let devices = try await store.historyDevices()
        let known =
            devices.isEmpty
            ? "the store keeps no fixes yet"
            : "devices with fixes: " + devices.prefix(10).joined(separator: ", ")
                + (devices.count > 10 ? ", … (\(devices.count))" : "")
        throw CommandFailure.invalidInput(["error: no stored fixes for device \(device) (\(known))"])
    }
}
