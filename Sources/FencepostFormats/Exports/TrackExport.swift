package import FencepostCore

/// The formats a stored track is written in (`fencepost track`, `GET /v1/devices/{id}/track`).
package enum TrackFormat: String, CaseIterable, Sendable {
    case geojson, gpx, csv

    package var contentType: String {
        switch self {
        case .geojson: return "application/geo+json"
        case .gpx: return "application/gpx+xml"
        case .csv: return "text/csv; charset=utf-8"
        }
    }
}

/// Writes one device's track as it is read, a piece at a time: ``start``, then ``add(_:)`` for
/// each run of fixes in time order, then ``end``; memory holds one run.
///
/// - geojson: a FeatureCollection of Point features, one per fix, with `device`, `time`
///   (RFC 3339) and, when known, `accuracy`, `altitude`, `speed` (metres, metres per second);
/// - gpx: GPX 1.1, one `<trk>` named after the device with one `<trkseg>`; each `<trkpt>` with
///   `<ele>` and `<time>`, accuracy and speed as `fencepost:hAcc` and `fencepost:speed`
///   extensions (the names Apple's GPX uses, which `ingest` reads back);
/// - csv: `device,time,lat,lon,accuracy,altitude,speed`.
///
/// Coordinates are written as stored: seven decimals at most (1e-7 degrees).
package struct TrackWriter {
    package let format: TrackFormat
    package let device: String
    private var written = 0

    package init(format: TrackFormat, device: String) {
        self.format = format
        self.device = device
    }

    /// How many fixes have been added.
    package var count: Int { written }

    package var start: String {
        switch format {
        case .geojson:
            return #"{"type":"FeatureCollection","features":["#
        case .gpx:
            return """
                <?xml version="1.0" encoding="UTF-8"?>
                <gpx version="1.1" creator="fencepost" xmlns="http://www.topografix.com/GPX/1/1" \
                xmlns:fencepost="https://github.com/fencepost/gpx/1">
                <trk><name>\(Self.xml(device))</name><trkseg>

                """
        case .csv:
            return "device,time,lat,lon,accuracy,altitude,speed\n"
        }
    }

    package var end: String {
        switch format {
        case .geojson: return written == 0 ? "]}\n" : "\n]}\n"
        case .gpx: return "</trkseg></trk>\n</gpx>\n"
        case .csv: return ""
        }
    }

    /// The text of `fixes`, in the order given.
    package mutating func add(_ fixes: [Fix]) -> String {
        var text = ""
        text.reserveCapacity(fixes.count * 120)
        for fix in fixes {
            switch format {
            case .geojson: geojson(fix, into: &text)
            case .gpx: gpx(fix, into: &text)
            case .csv: csv(fix, into: &text)
            }
            written += 1
        }
        return text
    }

    private func geojson(_ fix: Fix, into text: inout String) {
        text += written == 0 ? "\n" : ",\n"
        text += #"{"type":"Feature","geometry":{"type":"Point","coordinates":["#
        text += Self.decimal(fix.lon, places: 7) + "," + Self.decimal(fix.lat, places: 7)
        text += #"]},"properties":{"device":"# + JSONValue.string(device).canonicalText()
        text += #","time":""# + Timestamp.format(seconds: fix.time) + "\""
        if let accuracy = fix.accuracy { text += #","accuracy":"# + Self.decimal(accuracy, places: 1) }
        if let altitude = fix.altitude { text += #","altitude":"# + Self.decimal(altitude, places: 1) }
        if let speed = fix.speed { text += #","speed":"# + Self.decimal(speed, places: 2) }
        text += "}}"
    }

    private func gpx(_ fix: Fix, into text: inout String) {
        text += #"<trkpt lat=""# + Self.decimal(fix.lat, places: 7) + #"" lon=""# + Self.decimal(fix.lon, places: 7)
        text += "\">"
        if let altitude = fix.altitude { text += "<ele>" + Self.decimal(altitude, places: 1) + "</ele>" }
        text += "<time>" + Timestamp.format(seconds: fix.time) + "</time>"
        if fix.accuracy != nil || fix.speed != nil {
            text += "<extensions>"
            if let accuracy = fix.accuracy {
                text += "<fencepost:hAcc>" + Self.decimal(accuracy, places: 1) + "</fencepost:hAcc>"
            }
            if let speed = fix.speed {
                text += "<fencepost:speed>" + Self.decimal(speed, places: 2) + "</fencepost:speed>"
            }
            text += "</extensions>"
        }
        text += "</trkpt>\n"
    }

    private func csv(_ fix: Fix, into text: inout String) {
        text += CSV.field(device) + "," + Timestamp.format(seconds: fix.time) + ","
        text += Self.decimal(fix.lat, places: 7) + "," + Self.decimal(fix.lon, places: 7) + ","
        text += (fix.accuracy.map { Self.decimal($0, places: 1) } ?? "") + ","
        text += (fix.altitude.map { Self.decimal($0, places: 1) } ?? "") + ","
        text += (fix.speed.map { Self.decimal($0, places: 2) } ?? "") + "\n"
    }

    /// `value` in plain decimal notation (never an exponent: GPX's coordinates are xsd:decimal),
    /// rounded to `places` and without trailing zeros.
    package static func decimal(_ value: Double, places: Int) -> String {
        var scale: Int64 = 1
        for _ in 0..<places { scale *= 10 }
        let scaled = (value * Double(scale)).rounded()
        guard scaled.isFinite, abs(scaled) < 9.0e18 else { return "0" }
        let units = Int64(scaled)
        let whole = abs(units) / scale
        var fraction = abs(units) % scale
        var digits = places
        while digits > 0, fraction % 10 == 0 {
            fraction /= 10
            digits -= 1
        }
        var text = units < 0 ? "-" : ""
        text += String(whole)
        guard digits > 0 else { return text }
        let fractionText = String(fraction)
        return text + "." + String(repeating: "0", count: digits - fractionText.count) + fractionText
    }

    /// Text for XML content and attributes.
    static func xml(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            default: out.append(character)
            }
        }
        return out
    }
}
