package import FencepostCore

/// GeoJSON traces: Point features with a time property (`time`, `timestamp`, `date`), and
/// LineString or MultiLineString features with per-position times in `coordTimes` or `times`
/// (as togeojson writes them). Positions may carry an altitude. Streamed one feature at a time.
///
/// Each feature's device is its `device` property (else `name`, else `tid`; or the property the
/// options name), so one file may hold a fleet; times without a zone are UTC unless the options
/// give their zone.
package struct GeoJSONTraceReader: TraceReader {
    private var stream: JSONArrayStream
    private let fallbackDevice: String
    private let deviceOverride: String?
    private let deviceProperties: [String]
    private var zone: LocalTimeZone?
    private var pending: [Fix] = []
    package private(set) var skipped: [String: Int] = [:]

    package init(source: ByteSource, fallbackDevice: String, device: String?) {
        self.init(source: source, fallbackDevice: fallbackDevice, options: TraceReaderOptions(device: device))
    }

    package init(source: ByteSource, fallbackDevice: String, options: TraceReaderOptions) {
        stream = JSONArrayStream(source: source, key: "features")
        self.fallbackDevice = fallbackDevice
        self.deviceOverride = options.device
        self.deviceProperties = options.deviceProperty.map { [$0] } ?? ["device", "name", "tid"]
        self.zone = options.zone
    }

    package mutating func next() throws(TraceReadError) -> Fix? {
        while pending.isEmpty {
            guard let feature = try stream.next() else { return nil }
            read(feature)
        }
        return pending.removeFirst()
    }

    private mutating func read(_ feature: JSONValue) {
        let properties = feature["properties"]?.objectValue ?? [:]
        let device =
            deviceOverride ?? deviceProperties.lazy.compactMap { properties[$0].flatMap(Self.deviceText) }.first
            ?? fallbackDevice
        let accuracy = (properties["accuracy"] ?? properties["acc"])?.numberValue
        guard let geometry = feature["geometry"], let type = geometry["type"]?.stringValue,
            let coordinates = geometry["coordinates"]?.arrayValue
        else {
            skipped["no_geometry", default: 0] += 1
            return
        }
        switch type {
        case "Point":
            let time = (properties["time"] ?? properties["timestamp"] ?? properties["date"]).flatMap { self.time($0) }
            guard let time else {
                skipped["missing_or_bad_time", default: 0] += 1
                return
            }
            add(coordinates, time: time, device: device, accuracy: accuracy)
        case "LineString":
            addLine(coordinates, times: Self.times(properties)?.first, device: device)
        case "MultiLineString":
            let times = Self.times(properties)
            for (index, line) in coordinates.enumerated() {
                addLine(
                    line.arrayValue ?? [], times: times.flatMap { index < $0.count ? $0[index] : nil }, device: device)
            }
        default:
            skipped["unsupported_geometry", default: 0] += 1
        }
    }

    private mutating func addLine(_ positions: [JSONValue], times: [JSONValue]?, device: String) {
        guard let times, times.count == positions.count else {
            skipped["missing_or_bad_time", default: 0] += positions.count
            return
        }
        for (position, time) in zip(positions, times) {
            guard let time = self.time(time) else {
                skipped["missing_or_bad_time", default: 0] += 1
                continue
            }
            add(position.arrayValue ?? [], time: time, device: device, accuracy: nil)
        }
    }

    private mutating func add(_ position: [JSONValue], time: Double, device: String, accuracy: Double?) {
        guard position.count >= 2, let lon = position[0].numberValue, let lat = position[1].numberValue else {
            skipped["missing_or_bad_coordinates", default: 0] += 1
            return
        }
        pending.append(
            Fix(
                device: device, time: time, lat: lat, lon: lon, accuracy: accuracy,
                altitude: position.count > 2 ? position[2].numberValue : nil))
    }

    /// `coordTimes`/`times` as one array per line (a LineString's single array is wrapped).
    private static func times(_ properties: [String: JSONValue]) -> [[JSONValue]]? {
        guard let value = (properties["coordTimes"] ?? properties["times"])?.arrayValue else { return nil }
        if value.first?.arrayValue != nil { return value.compactMap(\.arrayValue) }
        return [value]
    }

    /// RFC 3339 text (without a zone: in the reader's zone, else UTC), or Unix seconds or
    /// milliseconds.
    private mutating func time(_ value: JSONValue) -> Double? {
        switch value {
        case .string(var text):
            guard zone != nil else { return Timestamp.parse(text) }
            guard let (seconds, zoned) = text.withUTF8({ Timestamp.parseNotingZone(utf8: $0) }) else { return nil }
            return zoned ? seconds : zone!.utc(fromLocal: seconds)
        case .number(let number): return number > 100_000_000_000 ? number / 1000 : number
        default: return nil
        }
    }

    /// A device named by a string, or by a whole number (an MMSI, a vehicle number).
    private static func deviceText(_ value: JSONValue) -> String? {
        switch value {
        case .string(let text): return text.isEmpty ? nil : text
        case .number(let number) where number.rounded() == number && abs(number) < 1e15: return String(Int64(number))
        default: return nil
        }
    }
}
