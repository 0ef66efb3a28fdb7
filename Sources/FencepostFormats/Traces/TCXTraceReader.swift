package import FencepostCore

/// Garmin Training Center XML: `Trackpoint`s with `Time`, `Position` (`LatitudeDegrees`,
/// `LongitudeDegrees`), `AltitudeMeters` and the TPX `Speed` extension. Trackpoints without a
/// position (heart rate only) are skipped and counted.
package struct TCXTraceReader: TraceReader {
    private var parser: XMLPullParser
    private let device: String
    private var sawRoot = false
    private var point: [String: String]?
    private var field: String?
    package private(set) var skipped: [String: Int] = [:]

    private static let fields: Set<String> = ["Time", "LatitudeDegrees", "LongitudeDegrees", "AltitudeMeters", "Speed"]

    package init(source: ByteSource, device: String) {
        parser = XMLPullParser(source: source)
        self.device = device
    }

    package mutating func next() throws(TraceReadError) -> Fix? {
        while let event = try parser.next() {
            switch event {
            case .start(let name, _):
                if !sawRoot {
                    guard name == "TrainingCenterDatabase" else {
                        throw TraceReadError(
                            file: parser.name, line: parser.line,
                            reason: "not a TCX file: the root element is <\(name)>")
                    }
                    sawRoot = true
                }
                if name == "Trackpoint" {
                    point = [:]
                } else if point != nil, Self.fields.contains(name) {
                    field = name
                }
            case .text(let text):
                if let field, point != nil { point?[field] = text.trimmed() }
            case .end(let name):
                if name == field { field = nil }
                if name == "Trackpoint", let values = point {
                    point = nil
                    guard let time = values["Time"].flatMap(Timestamp.parse) else {
                        skipped["missing_or_bad_time", default: 0] += 1
                        continue
                    }
                    guard let lat = values["LatitudeDegrees"].flatMap(Double.init),
                        let lon = values["LongitudeDegrees"].flatMap(Double.init)
                    else {
                        skipped["no_position", default: 0] += 1
                        continue
                    }
                    return Fix(
                        device: device, time: time, lat: lat, lon: lon,
                        altitude: values["AltitudeMeters"].flatMap(Double.init),
                        speed: values["Speed"].flatMap(Double.init))
                }
            }
        }
        return nil
    }
}
