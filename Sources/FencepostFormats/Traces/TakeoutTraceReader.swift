package import FencepostCore

/// Google Takeout Location History `Records.json`: `locations` with `latitudeE7`,
/// `longitudeE7`, `accuracy`, `altitude`, `velocity`, and `timestamp` (RFC 3339) or the older
/// `timestampMs`. Streamed one location at a time.
package struct TakeoutTraceReader: TraceReader {
    private var stream: JSONArrayStream
    private let device: String
    package private(set) var skipped: [String: Int] = [:]

    package init(source: ByteSource, device: String) {
        stream = JSONArrayStream(source: source, key: "locations")
        self.device = device
    }

    package mutating func next() throws(TraceReadError) -> Fix? {
        while let location = try stream.next() {
            let time =
                location["timestamp"]?.stringValue.flatMap(Timestamp.parse)
                ?? location["timestampMs"]?.stringValue.flatMap(Double.init).map { $0 / 1000 }
            guard let time else {
                skipped["missing_or_bad_time", default: 0] += 1
                continue
            }
            guard let latE7 = location["latitudeE7"]?.numberValue, let lonE7 = location["longitudeE7"]?.numberValue
            else {
                skipped["missing_or_bad_coordinates", default: 0] += 1
                continue
            }
            return Fix(
                device: device, time: time, lat: latE7 / 1e7, lon: lonE7 / 1e7,
                accuracy: location["accuracy"]?.numberValue, altitude: location["altitude"]?.numberValue,
                speed: location["velocity"]?.numberValue)
        }
        return nil
    }
}
