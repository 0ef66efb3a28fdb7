package import FencepostCore

/// GPX 1.0 and 1.1: track points, route points and waypoints that carry a time, with
/// elevation, speed and accuracy (Apple's `hAcc` extension, else `hdop` × 5 m).
/// Fixes are named after the track (`<trk><name>`), else the file.
package struct GPXTraceReader: TraceReader {
    private var parser: XMLPullParser
    private let fallbackDevice: String
    private let deviceOverride: String?
    private var trackName: String?
    private var sawRoot = false
    package private(set) var skipped: [String: Int] = [:]

    /// The point being read and the element whose text comes next.
    private var point: Point?
    private var field: String?
    private var inTrack = false

    private struct Point {
        var lat: Double?
        var lon: Double?
        var time: Double?
        var timeText: String?
        var elevation: Double?
        var speed: Double?
        var accuracy: Double?
        var hdop: Double?
    }

    private static let pointElements: Set<String> = ["trkpt", "rtept", "wpt"]
    private static let fields: Set<String> = ["time", "ele", "speed", "hAcc", "hdop", "name"]

    /// `device` overrides the track names when given.
    package init(source: ByteSource, fallbackDevice: String, device: String? = nil) {
        parser = XMLPullParser(source: source)
        self.fallbackDevice = fallbackDevice
        self.deviceOverride = device
    }

    package mutating func next() throws(TraceReadError) -> Fix? {
        while let event = try parser.next() {
            switch event {
            case .start(let name, let attributes):
                if !sawRoot {
                    guard name == "gpx" else {
                        throw TraceReadError(
                            file: parser.name, line: parser.line,
                            reason: "not a GPX file: the root element is <\(name)>")
                    }
                    sawRoot = true
                }
                if name == "trk" || name == "rte" {
                    inTrack = true
                    trackName = nil
                } else if Self.pointElements.contains(name) {
                    point = Point(
                        lat: attributes["lat"].flatMap(Double.init), lon: attributes["lon"].flatMap(Double.init))
                } else if Self.fields.contains(name) {
                    field = name
                }
            case .text(let text):
                guard let field else { continue }
                if field == "name" {
                    if point == nil, inTrack, trackName == nil { trackName = text.trimmed() }
                    continue
                }
                guard point != nil else { continue }
                let value = text.trimmed()
                switch field {
                case "time":
                    point?.timeText = value
                    point?.time = Timestamp.parse(value)
                case "ele": point?.elevation = Double(value)
                case "speed": point?.speed = Double(value)
                case "hAcc": point?.accuracy = Double(value)
                case "hdop": point?.hdop = Double(value)
                default: break
                }
            case .end(let name):
                if name == field { field = nil }
                if name == "trk" || name == "rte" { inTrack = false }
                if Self.pointElements.contains(name), let finished = point {
                    point = nil
                    if let fix = fix(from: finished) { return fix }
                }
            }
        }
        if !sawRoot {
            throw TraceReadError(file: parser.name, line: nil, reason: "not a GPX file: no <gpx> element")
        }
        return nil
    }

    private mutating func fix(from point: Point) -> Fix? {
        guard let time = point.time else {
            skipped[point.timeText == nil ? "missing_time" : "bad_time", default: 0] += 1
            return nil
        }
        guard let lat = point.lat, let lon = point.lon, lat.isFinite, lon.isFinite else {
            skipped["missing_or_bad_coordinates", default: 0] += 1
            return nil
        }
        return Fix(
            device: deviceOverride ?? trackName ?? fallbackDevice, time: time, lat: lat, lon: lon,
            accuracy: point.accuracy ?? point.hdop.map { $0 * 5 }, altitude: point.elevation, speed: point.speed)
    }
}

extension String {
    func trimmed() -> String {
        var slice = Substring(self)
        while let first = slice.first, first.isWhitespace { slice.removeFirst() }
        while let last = slice.last, last.isWhitespace { slice.removeLast() }
        return String(slice)
    }
}
