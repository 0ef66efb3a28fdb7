package import FencepostCore
import FencepostGeometry
package import Foundation

/// Where an export writes its text: a file, stdout, an HTTP response.
package protocol TextSink {
    mutating func write(_ text: String) throws
}

/// A sink that keeps the text in memory.
package struct StringSink: TextSink {
    package private(set) var text = ""

    package init() {}

    package mutating func write(_ text: String) {
        self.text += text
    }
}

/// The formats events export to.
package enum ExportFormat: String, Sendable, CaseIterable {
    case csv, jsonl, geojson, ics

    package var contentType: String {
        switch self {
        case .csv: return "text/csv; charset=utf-8"
        case .jsonl: return "application/x-ndjson"
        case .geojson: return "application/geo+json"
        case .ics: return "text/calendar; charset=utf-8"
        }
    }
}

/// How events and visits read as export text: the one place every export (`events export`,
/// `scan`, the HTTP API) takes its lines and objects from, so they agree byte for byte.
package enum EventExport {
    package static func csvHeader(zone: TimeZone?) -> String {
        "id,time,kind,device,region,visit_id,flags" + (zone == nil ? "" : ",local_time") + "\n"
    }

    package static func csvLine(_ event: EventRow, zone: TimeZone?) -> String {
        var fields = [
            event.id, event.time, event.kind, event.device, event.region ?? "", event.visitID ?? "",
            event.flags.count == 1 ? event.flags[0] : event.flags.joined(separator: ";"),
        ]
        if let zone { fields.append(LocalTime.format(milliseconds: event.timeMs, in: zone)) }
        return CSV.line(fields)
    }

    /// The event as JSON: the JSON Lines export's line and the HTTP API's event object: the
    /// common fields, the source, coordinates only where the event has them, its properties
    /// when it has any (health events), and the local time when a zone is asked for.
    package static func json(_ event: EventRow, zone: TimeZone? = nil) -> JSONValue {
        var object = event.jsonFields
        object["source"] = .string(event.source)
        if let lat = event.lat, let lon = event.lon {
            object["lat"] = .number(lat)
            object["lon"] = .number(lon)
        }
        if event.properties != "{}", let properties = try? JSONParser.parse(Array(event.properties.utf8)) {
            object["properties"] = properties
        }
        if let zone { object["local_time"] = .string(LocalTime.format(milliseconds: event.timeMs, in: zone)) }
        return .object(object)
    }

    /// The JSON Lines export's line for an event.
    package static func jsonLine(_ event: EventRow, zone: TimeZone?) -> String {
        json(event, zone: zone).canonicalText() + "\n"
    }
}

/// Visits as the exports list them (`visits list`, `scan --visits`).
package enum VisitExport {
    package static let csvHeader = "id,device,region,entered_at,exited_at,status,exit_reason\n"

    package static func csvLine(_ visit: VisitRow) -> String {
        let fields = [
            visit.id, visit.device, visit.region, visit.enteredAt, visit.exitedAt ?? "", visit.status,
            visit.exitReason ?? "",
        ]
        return CSV.line(fields)
    }

    package static func jsonLine(_ visit: VisitRow) -> String {
        visit.json.canonicalText() + "\n"
    }
}

/// GeoJSON export: events as Point features at their crossing (dwells have no point), visits
/// as features with their region's geometry (a circle as its centre with a `radius`).
package struct GeoJSONExport {
    private var first = true

    package init() {}

    package static let header = #"{"type":"FeatureCollection","features":["#
    package static let footer = "\n]}\n"

    /// The next feature, after a separator when it is not the first.
    package mutating func feature(_ value: JSONValue) -> String {
        feature(text: value.canonicalText())
    }

    /// The next feature, given as its JSON text.
    package mutating func feature(text: String) -> String {
        defer { first = false }
        return (first ? "\n" : ",\n") + text
    }

    /// An event as a Point at its crossing (a dwell has no geometry); its properties are the
    /// common fields and `"type": "event"`.
    package static func feature(_ event: EventRow) -> JSONValue {
        let geometry: JSONValue =
            event.lat.flatMap { lat in event.lon.map { Shape.point(Position(lon: $0, lat: lat)).geoJSON } } ?? .null
        var properties = event.jsonFields
        properties["type"] = .string("event")
        return .object(["type": .string("Feature"), "geometry": geometry, "properties": .object(properties)])
    }

    /// A visit with its region's shape (nil when the region is not known).
    package static func feature(_ visit: VisitRow, region: Region?) -> JSONValue {
        var properties = visit.json.objectValue ?? [:]
        properties["type"] = .string("visit")
        if case .circle(_, let radius)? = region?.shape { properties["radius"] = .number(radius) }
        if case .corridor(let corridor)? = region?.shape { properties["buffer"] = .number(corridor.buffer) }
        return .object([
            "type": .string("Feature"), "geometry": region?.shape.geometry.geoJSON ?? .null,
            "properties": .object(properties),
        ])
    }
}

/// iCalendar (RFC 5545) export: one VEVENT per visit, open visits too (ending at the device's
/// last fix, marked tentative), for calendar apps.
package enum ICSExport {
    package static let header = [
        "BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//Fencepost//Fencepost//EN", "CALSCALE:GREGORIAN",
    ]
    package static let footer = ["END:VCALENDAR"]

    /// The VEVENT of a visit in `region` (its name, else its id); an open visit ends at
    /// `lastFix`, the device's last fix time in milliseconds.
    package static func vevent(_ visit: VisitRow, regionName region: String, lastFix: Int64?) -> [String] {
        let end = visit.exitedMs ?? max(lastFix ?? visit.enteredMs, visit.enteredMs)
        let state = visit.isOpen ? "open: still inside at the last fix" : "left (\(visit.exitReason ?? "exit"))"
        return [
            "BEGIN:VEVENT",
            "UID:\(visit.id)@fencepost",
            "DTSTAMP:\(basic(visit.exitedMs ?? visit.enteredMs))",
            "DTSTART:\(basic(visit.enteredMs))",
            "DTEND:\(basic(end))",
            "SUMMARY:\(escape(region))",
            "DESCRIPTION:\(escape("Device \(visit.device) in \(visit.region); \(state)"))",
            "LOCATION:\(escape(region))",
            "STATUS:\(visit.isOpen ? "TENTATIVE" : "CONFIRMED")",
            "END:VEVENT",
        ]
    }

    /// `20190218T074550Z`: the UTC form RFC 5545 wants (whole seconds).
    static func basic(_ milliseconds: Int64) -> String {
        let text = Timestamp.format(milliseconds: milliseconds)  // 2019-02-18T07:45:50.000Z
        return text.prefix(19).filter { $0 != "-" && $0 != ":" } + "Z"
    }

    static func escape(_ text: String) -> String {
        var result = ""
        for character in text {
            switch character {
            case "\\": result += "\\\\"
            case ";": result += "\\;"
            case ",": result += "\\,"
            case "\n": result += "\\n"
            default: result.append(character)
            }
        }
        return result
    }

    /// Content lines, each folded at 75 octets with CRLF and a leading space (RFC 5545 3.1).
    package static func text(_ lines: [String]) -> String {
        var text = ""
        for line in lines { fold(line, into: &text) }
        return text
    }

    private static func fold(_ line: String, into text: inout String) {
        var remaining = Substring(line)
        var firstLine = true
        while true {
            let limit = firstLine ? 75 : 74
            var octets = 0
            var end = remaining.startIndex
            while end < remaining.endIndex {
                let size = remaining[end].utf8.count
                if octets + size > limit { break }
                octets += size
                end = remaining.index(after: end)
            }
            text += (firstLine ? "" : " ") + remaining[..<end] + "\r\n"
            remaining = remaining[end...]
            firstLine = false
            if remaining.isEmpty { return }
        }
    }
}
