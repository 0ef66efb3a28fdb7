public import FencepostCore
import FencepostGeometry
public import Foundation

/// Where an export writes its text: a file, stdout, an HTTP response.
public protocol TextSink {
    mutating func write(_ text: String) throws
}

/// A sink that keeps the text in memory.
public struct StringSink: TextSink {
    public private(set) var text = ""

    public init() {}

    public mutating func write(_ text: String) {
        self.text += text
    }
}

/// The formats events export to.
public enum ExportFormat: String, Sendable, CaseIterable {
    case csv, jsonl, geojson, ics

    public var contentType: String {
        switch self {
        case .csv: return "text/csv; charset=utf-8"
        case .jsonl: return "application/x-ndjson"
        case .geojson: return "application/geo+json"
        case .ics: return "text/calendar; charset=utf-8"
        }
    }
}

/// Event exports, shared by `fencepost events export` and the HTTP service.
public enum EventExport {
    /// Writes every event (or, for ics, visit) `query` selects, in `format`; `zone` adds local
    /// times to csv and jsonl.
    public static func write(_ format: ExportFormat, query: EventQuery, zone: TimeZone?, store: Store, to sink: inout some TextSink) throws {
        switch format {
        case .csv:
            try sink.write(csvHeader(zone: zone))
            try store.forEachEvent(query) { event in try sink.write(csvLine(event, zone: zone)) }
        case .jsonl:
            try store.forEachEvent(query) { event in try sink.write(json(event, zone: zone).canonicalText() + "\n") }
        case .geojson:
            try GeoJSONExport.write(events: query, includeVisits: query.kind == nil, store: store, to: &sink)
        case .ics:
            try ICSExport.write(query, store: store, to: &sink)
        }
    }

    public static func csvHeader(zone: TimeZone?) -> String {
        "id,time,kind,device,region,visit_id,flags" + (zone == nil ? "" : ",local_time") + "\n"
    }

    public static func csvLine(_ event: EventRow, zone: TimeZone?) -> String {
        var fields = [event.id, event.time, event.kind, event.device, event.region ?? "", event.visitID ?? "", event.flags.joined(separator: ";")]
        if let zone { fields.append(LocalTime.format(milliseconds: event.timeMs, in: zone)) }
        return fields.map(CSV.field).joined(separator: ",") + "\n"
    }

    /// The event as JSON: the JSON Lines export's line and the HTTP API's event object.
    public static func json(_ event: EventRow, zone: TimeZone? = nil) -> JSONValue {
        var object: [String: JSONValue] = [
            "id": .string(event.id), "time": .string(event.time), "kind": .string(event.kind),
            "source": .string(event.source), "device": .string(event.device),
            "region": event.region.map(JSONValue.string) ?? .null,
            "visit_id": event.visitID.map(JSONValue.string) ?? .null,
            "flags": .array(event.flags.map(JSONValue.string)),
        ]
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
}

/// GeoJSON export: events as Point features at their crossing (dwells have no point), visits
/// as features with their region's geometry (a circle as its centre with a `radius`).
enum GeoJSONExport {
    static func write(events query: EventQuery, includeVisits: Bool, store: Store, to sink: inout some TextSink) throws {
        try sink.write(#"{"type":"FeatureCollection","features":["#)
        var first = true
        func feature(_ value: JSONValue, _ sink: inout some TextSink) throws {
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
    static func write(_ query: EventQuery, store: Store, to sink: inout some TextSink) throws {
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
    static func line(_ text: String, _ sink: inout some TextSink) throws {
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
