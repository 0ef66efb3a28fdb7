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

    static let csvHeader = "period,device,subject,time_inside_s,visits,first_entry,last_exit,distance_m,moving_s\n"

    func write(_ rows: [TimeSheet.Row], to sink: inout some TextSink) throws {
        switch format {
        case .csv:
            try sink.write(Self.csvHeader)
            for row in rows {
                // A region's row has no movement; a device's movement row has no time inside.
                let fields =
                    row.subject == nil
                    ? [row.period, row.device, "", "", "", "", "", Self.number(row.distance), Self.number(row.moving)]
                    : [
                        row.period, row.device, row.subject ?? "", Self.number(row.inside), String(row.visits),
                        local(row.firstEntry), local(row.lastExit), "", "",
                    ]
                try sink.write(fields.map(CSV.field).joined(separator: ",") + "\n")
            }
        case .jsonl:
            for row in rows { try sink.write(json(row).canonicalText() + "\n") }
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

    func json(_ row: TimeSheet.Row) -> JSONValue {
        var object: [String: JSONValue] = [
            "period": .string(row.period), "device": .string(row.device),
            "period_start": .string(LocalTime.format(milliseconds: Timestamp.milliseconds(row.periodStart), in: zone)),
        ]
        if let subject = row.subject {
            object["subject"] = .string(subject)
            object["time_inside_s"] = .number(row.inside.rounded())
            object["visits"] = .number(Double(row.visits))
            object["first_entry"] = row.firstEntry.map { .string(local($0)) } ?? .null
            object["last_exit"] = row.lastExit.map { .string(local($0)) } ?? .null
        } else {
            object["distance_m"] = .number((row.distance * 10).rounded() / 10)
            object["moving_s"] = .number(row.moving.rounded())
        }
        return .object(object)
    }

    private func local(_ time: Double?) -> String {
        time.map { LocalTime.format(milliseconds: Timestamp.milliseconds($0), in: zone) } ?? ""
    }

    /// `08:04` for a table.
    private func short(_ time: Double?) -> String {
        guard let text = time.map({ local($0) }) else { return "" }
        return String(text.dropFirst(11).prefix(5))
    }

    static func number(_ value: Double) -> String {
        value == value.rounded() ? String(Int64(value)) : String((value * 10).rounded() / 10)
    }

    /// `7:45:02`.
    static func clock(_ seconds: Double) -> String {
        let total = Int64(seconds.rounded())
        let minutes = total / 60 % 60
        let rest = total % 60
        return "\(total / 3600):" + (minutes < 10 ? "0" : "") + "\(minutes):" + (rest < 10 ? "0" : "") + "\(rest)"
    }
}
