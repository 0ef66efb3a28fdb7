package import FencepostCore
package import Foundation

/// Time sheet rows as CSV and JSON (`summary`, `/v1/summary`): durations in seconds, times in
/// the sheet's zone. A region's row has no movement; a device's movement row no time inside.
package struct TimeSheetExport {
    package var zone: TimeZone

    package init(zone: TimeZone) {
        self.zone = zone
    }

    package static let csvHeader =
        "period,device,subject,time_inside_s,visits,first_entry,last_exit,distance_m,moving_s\n"

    package func csvLine(_ row: TimeSheet.Row) -> String {
        let fields =
            row.subject == nil
            ? [row.period, row.device, "", "", "", "", "", Self.number(row.distance), Self.number(row.moving)]
            : [
                row.period, row.device, row.subject ?? "", Self.number(row.inside), String(row.visits),
                local(row.firstEntry), local(row.lastExit), "", "",
            ]
        return CSV.line(fields)
    }

    package func json(_ row: TimeSheet.Row) -> JSONValue {
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

    package func local(_ time: Double?) -> String {
        time.map { LocalTime.format(milliseconds: Timestamp.milliseconds($0), in: zone) } ?? ""
    }

    static func number(_ value: Double) -> String {
        if let whole = Int64(exactly: value) { return String(whole) }
        return String((value * 10).rounded() / 10)
    }
}
