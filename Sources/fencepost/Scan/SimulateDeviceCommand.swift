import ArgumentParser
import FencepostCore
import FencepostFormats
import FencepostIngest
import Foundation

struct SimulateDeviceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "simulate-device",
        abstract: "Replay traces as a phone geofencing on its own within an OS budget would see them.",
        discussion: """
            Each device of the traces is replayed as a phone whose OS monitors at most --budget \
            circles (iOS 20, Android 100), chosen by each policy: fencepost (the monitored set \
            GET /v1/devices/{id}/monitored-set answers: the nearest regions and a re-plan circle, \
            asked again on leaving it), nearest (the nearest budget - 1, chosen again on each \
            significant location change: 500 m, at most every 5 minutes) and first-n (the first \
            budget regions by id). The phone sees a circle entered at its first fix inside and \
            delivers the stay only if the device stayed --delay seconds; its re-plan requests \
            wait the same delay. Beside them, the server's monitor (ingest's filter and monitor) \
            on the same fixes: its visits are the reference, less those shorter than --delay, \
            which no phone hears of. Prints, per policy, the visits found, those missed because \
            the region was not monitored, the others missed, recall, and re-plans (each a wake-up and a request) per hour and per hour moving. \
            Nothing is stored.
            """)

    @Option(
        name: .customLong("regions"),
        help: ArgumentHelp(
            "A region config file, or a directory of *.geojson files; repeat for more.", valueName: "path"))
    var regionPaths: [String] = []

    @Option(help: ArgumentHelp("A roster file: the groups regions' `groups` select.", valueName: "file"))
    var roster: String?

    @Argument(help: ArgumentHelp("Trace files; - reads standard input.", valueName: "file"))
    var files: [String] = []

    @Option(help: "Circles the phone's OS monitors at once (iOS 20, Android 100).")
    var budget: Int = 20

    @Option(
        help: ArgumentHelp(
            "Policies to compare: fencepost, nearest, first-n; repeat (default: all).", valueName: "name"))
    var policy: [String] = []

    @Option(help: "Seconds the OS waits before it delivers an entry, an exit or a re-plan exit.")
    var delay: Double = 30

    @Flag(help: "Print the figures as one JSON object.")
    var json = false

    @Option(help: "Input format: auto (from the content), gpx, geojson, csv, takeout, timeline, plt, owntracks or tcx.")
    var inputFormat: TraceFormatChoice = .auto

    @OptionGroup var reader: ReaderOptions

    @OptionGroup var monitor: MonitorOptions

    func validate() throws {
        guard !regionPaths.isEmpty else {
            throw ValidationError("Name the regions with --regions PATH (a file or a directory).")
        }
        guard !files.isEmpty else { throw ValidationError("Name at least one trace file (- for standard input).") }
        guard (2...10_000).contains(budget) else { throw ValidationError("--budget must be from 2 to 10000.") }
        guard delay.isFinite, delay >= 0 else { throw ValidationError("--delay must be 0 or more seconds.") }
        for name in policy where PhonePolicy(rawValue: name) == nil {
            throw ValidationError("--policy: \(name) is not one of fencepost, nearest, first-n.")
        }
    }

    func run() async throws {
        try await CommandFailure.reporting {
            let (regions, roster) = try RegionFiles.load(regionPaths, roster: roster)
            let policies = policy.isEmpty ? PhonePolicy.allCases : policy.compactMap(PhonePolicy.init(rawValue:))
            let simulation = try DeviceSimulation(
                regions: regions, roster: roster, monitor: monitor.monitor, filter: monitor.filter,
                policies: policies, budget: budget, delay: delay)
            var feed = TraceFeed(format: inputFormat.format, options: reader.options(zone: nil))
            let refusals = try await feed.feed(files, to: { try simulation.simulate($0.open()) }, skipped: { _ in })
            let reports = simulation.finish()
            print(json ? Self.json(reports, budget: budget, delay: delay) : Self.table(reports, regions: regions.count))
            if let failure = refusals.failure { throw failure }
        }
    }

    static func table(_ reports: [DeviceSimulation.Report], regions: Int) -> String {
        guard let first = reports.first else { return "" }
        var lines = [
            "server-side monitor: \(first.visits) visits (\(first.tooShort) shorter than the OS's delay) in \(String(format: "%.1f", first.hours)) h of traces (\(String(format: "%.1f", first.movingHours)) h moving), \(regions) regions",
            "policy     found  recall  missed: not monitored  other  re-plans  per hour  per hour moving",
        ]
        for report in reports {
            lines.append(
                report.policy.rawValue.padding(toLength: 9, withPad: " ", startingAt: 0)
                    + String(
                        format: " %6d  %6.3f  %21d  %5d  %8d  %8.1f  %15.1f", report.found, report.recall,
                        report.missedUnmonitored, report.missedOther, report.replans, report.replansPerHour,
                        report.replansPerMovingHour))
        }
        return lines.joined(separator: "\n")
    }

    static func json(_ reports: [DeviceSimulation.Report], budget: Int, delay: Double) -> String {
        JSONValue.object([
            "budget": .number(Double(budget)), "delay_seconds": .number(delay),
            "policies": .array(
                reports.map { report in
                    .object([
                        "policy": .string(report.policy.rawValue), "visits": .number(Double(report.visits)),
                        "too_short": .number(Double(report.tooShort)), "found": .number(Double(report.found)),
                        "recall": .number(report.recall),
                        "missed_not_monitored": .number(Double(report.missedUnmonitored)),
                        "missed_other": .number(Double(report.missedOther)),
                        "replans": .number(Double(report.replans)), "hours": .number(report.hours),
                        "moving_hours": .number(report.movingHours),
                        "replans_per_hour": .number(report.replansPerHour),
                        "replans_per_moving_hour": .number(report.replansPerMovingHour),
                    ])
                }),
        ]).canonicalText()
    }
}
