import ArgumentParser
import FencepostCore
import FencepostFormats
import FencepostStore
import Foundation

struct VisitsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "visits",
        abstract: "Read visits: stays in a region, from enter to exit.",
        subcommands: [VisitsList.self])
}

struct VisitsList: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List visits in enter-time order.")

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case table, csv, json
    }

    @OptionGroup var store: StoreOptions

    @Flag(help: "Only visits that have not ended.")
    var open = false

    @Option(help: "Only this device's visits.")
    var device: String?

    @Option(help: "Only visits of this region.")
    var region: String?

    @Option(help: "Output format: table, csv or json.")
    var format: Format = .table

    func run() async throws {
        try await CommandFailure.reporting {
            var sink = try OutputSink(path: nil)
            var rows: [[String]] = []
            var count = 0
            if format == .csv { try sink.write(VisitExport.csvHeader) }
            if format == .json { try sink.write("[") }
            try await store.open(createIfMissing: false).forEachVisit(openOnly: open, device: device, region: region) {
                visit in
                switch format {
                case .table:
                    rows.append([
                        visit.device, visit.region, visit.enteredAt, visit.exitedAt ?? "-", visit.status,
                        visit.exitReason ?? "",
                    ])
                case .csv:
                    try sink.write(VisitExport.csvLine(visit))
                case .json:
                    try sink.write((count == 0 ? "" : ",") + visit.json.canonicalText())
                }
                count += 1
            }
            switch format {
            case .table:
                try sink.write(
                    Table.render(header: ["DEVICE", "REGION", "ENTERED", "EXITED", "STATUS", "REASON"], rows: rows)
                        + "\n")
                try sink.write("\(count) visit\(count == 1 ? "" : "s")\n")
            case .json: try sink.write("]\n")
            case .csv: break
            }
            try sink.close()
        }
    }
}

/// Fixed-width columns for terminal tables.
enum Table {
    static func render(header: [String], rows: [[String]]) -> String {
        let widths = header.indices.map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
        func line(_ cells: [String]) -> String {
            zip(cells, widths).map { $0.padding(toLength: $1, withPad: " ", startingAt: 0) }
                .joined(separator: "  ").trimmingTrailingSpaces()
        }
        return ([line(header)] + rows.map(line)).joined(separator: "\n")
    }
}
