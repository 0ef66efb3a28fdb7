import FencepostCore
import FencepostFormats
import Foundation

/// A time sheet as a table, CSV or JSON Lines: durations in seconds (a table shows h:mm:ss),
/// times in the sheet's zone.
struct TimeSheetOutput {
    var format: SummaryCommand.Format
    var zone: TimeZone
    /// Region names by id: a table shows a region's name where it has one.
    var names: [String: String] = [:]

    func write(_ rows: [TimeSheet.Row], to sink: inout some TextSink) throws {
        switch format {
        case .csv:
            try sink.write(TimeSheetExport.csvHeader)
            for row in rows { try sink.write(export.csvLine(row)) }
        case .jsonl:
            for row in rows { try sink.write(export.json(row).canonicalText() + "\n") }
        case .table:
            let table = rows.map { row in
                [
                    row.period, row.device, row.subject.map { names[$0] ?? $0 } ?? "(moving)",
                    row.subject == nil ? Self.clock(row.moving) : Self.clock(row.inside),
                    row.subject == nil ? "" : String(row.visits), short(row.firstEntry), short(row.lastExit),
                    row.subject == nil ? String(format: "%.1f km", row.distance / 1000) : "",
                ]
            }
            try sink.write(
                Table.render(
                    header: ["PERIOD", "DEVICE", "REGION", "TIME", "VISITS", "FIRST IN", "LAST OUT", "DISTANCE"],
                    rows: table) + "\n")
            try sink.write(
                "\(rows.count) row\(rows.count == 1 ? "" : "s") (times in \(zone.identifier == "GMT" ? "UTC" : zone.identifier))\n"
            )
        }
    }

    private var export: TimeSheetExport { TimeSheetExport(zone: zone) }

    /// `08:04` for a table.
    private func short(_ time: Double?) -> String {
        guard let text = time.map({ export.local($0) }) else { return "" }
        return String(text.dropFirst(11).prefix(5))
    }

    /// `7:45:02`.
    static func clock(_ seconds: Double) -> String {
        let total = Int64(seconds.rounded())
        let minutes = total / 60 % 60
        let rest = total % 60
        return "\(total / 3600):" + (minutes < 10 ? "0" : "") + "\(minutes):" + (rest < 10 ? "0" : "") + "\(rest)"
    }
}
