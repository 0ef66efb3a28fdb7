import FencepostCore
import FencepostGeometry
import FencepostStore
import Foundation

/// GeoJSON export: events as Point features at their crossing (dwells have no point), visits
/// as features with their region's geometry (a circle as its centre with a `radius`).
enum GeoJSONExport {
    static func write(events query: EventQuery, includeVisits: Bool, store: Store, to sink: inout OutputSink) throws {
        try sink.write(#"{"type":"FeatureCollection","features":["#)
        var first = true
        func feature(_ value: JSONValue, _ sink: inout OutputSink) throws {
            try sink.write((first ? "\n" : ",\n") + value.canonicalText())
            first = false
        }
        try store.forEachEvent(query) { event in
            let geometry: JSONValue = event.lat.flatMap { lat in event.lon.map { Shape.point(Position(lon: $0, lat: lat)).geoJSON } } ?? .null
            try feature(.object([
                "type": .string("Feature"), "geometry": geometry,
                "properties": .object([
                    "type": .string("event"), "id": .string(event.id), "kind": .string(event.kind), "time": .string(event.time),
                    "device": .string(event.device), "region": event.region.map(JSONValue.string) ?? .null,
                    "visit_id": event.visitID.map(JSONValue.string) ?? .null, "flags": .array(event.flags.map(JSONValue.string)),
                ]),
            ]), &sink)
        }
        if includeVisits {
            let regions = Dictionary(uniqueKeysWithValues: try store.monitoredRegions().map { ($0.region.id, $0.region) })
            try VisitSelection(query).forEach(store) { visit in
                var properties = visit.json.objectValue ?? [:]
                properties["type"] = .string("visit")
                let region = regions[visit.region]
                if case .circle(_, let radius)? = region?.shape { properties["radius"] = .number(radius) }
                try feature(.object([
                    "type": .string("Feature"), "geometry": region?.shape.geometry.geoJSON ?? .null, "properties": .object(properties),
                ]), &sink)
            }
        }
        try sink.write("\n]}\n")
    }
}

/// iCalendar (RFC 5545) export: one VEVENT per visit, open visits too (ending at the device's
/// last fix, marked tentative), for calendar apps.
enum ICSExport {
    static func write(_ query: EventQuery, store: Store, to sink: inout OutputSink) throws {
        let names = Dictionary(uniqueKeysWithValues: try store.monitoredRegions().map { ($0.region.id, $0.region.name ?? $0.region.id) })
        try line("BEGIN:VCALENDAR", &sink)
        try line("VERSION:2.0", &sink)
        try line("PRODID:-//Fencepost//Fencepost//EN", &sink)
        try line("CALSCALE:GREGORIAN", &sink)
        let lastFix = try store.deviceAnchors()
        try VisitSelection(query).forEach(store) { visit in
            let end = visit.exitedMs ?? max(lastFix[visit.device] ?? visit.enteredMs, visit.enteredMs)
            let region = names[visit.region] ?? visit.region
            try line("BEGIN:VEVENT", &sink)
            try line("UID:\(visit.id)@fencepost", &sink)
            try line("DTSTAMP:\(basic(visit.exitedMs ?? visit.enteredMs))", &sink)
            try line("DTSTART:\(basic(visit.enteredMs))", &sink)
            try line("DTEND:\(basic(end))", &sink)
            try line("SUMMARY:\(escape(region))", &sink)
            let state = visit.isOpen ? "open: still inside at the last fix" : "left (\(visit.exitReason ?? "exit"))"
            try line("DESCRIPTION:\(escape("Device \(visit.device) in \(visit.region); \(state)"))", &sink)
            try line("LOCATION:\(escape(region))", &sink)
            try line("STATUS:\(visit.isOpen ? "TENTATIVE" : "CONFIRMED")", &sink)
            try line("END:VEVENT", &sink)
        }
        try line("END:VCALENDAR", &sink)
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

    /// One content line, folded at 75 octets with CRLF and a leading space (RFC 5545 3.1).
    static func line(_ text: String, _ sink: inout OutputSink) throws {
        var remaining = Substring(text)
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
            try sink.write((firstLine ? "" : " ") + remaining[..<end] + "\r\n")
            remaining = remaining[end...]
            firstLine = false
            if remaining.isEmpty { return }
        }
    }
}

/// The visits an export's filters select: entered within [since, until), of a device or region.
struct VisitSelection {
    let query: EventQuery

    init(_ query: EventQuery) {
        self.query = query
    }

    func forEach(_ store: Store, _ body: (VisitRow) throws -> Void) throws {
        let since = query.since.map(Timestamp.milliseconds), until = query.until.map(Timestamp.milliseconds)
        try store.forEachVisit(device: query.device, region: query.region) { visit in
            if let since, visit.enteredMs < since { return }
            if let until, visit.enteredMs >= until { return }
            try body(visit)
        }
    }
}
