package import FencepostCore

/// Google Maps Timeline as the phone exports it since Timeline moved onto the device (2024).
///
/// - Android (`Timeline.json`): an object with `semanticSegments` (visits, activities, and
///   `timelinePath` points with a `time` each) and `rawSignals` (`position`s with `LatLng`,
///   `accuracyMeters`, `altitudeMeters`, `speedMetersPerSecond` and `timestamp`, beside Wi-Fi
///   scans and activity records); positions are written `"47.3769°, 8.5417°"`.
/// - iOS (`location-history.json`): an array of segments whose `timelinePath` points carry
///   `durationMinutesOffsetFromStartTime` from the segment's `startTime`; positions are written
///   `"geo:47.3769,8.5417"`, numbers often as strings.
///
/// The raw signals' positions are the fixes, since they are what the phone measured; the
/// timeline paths (Google's smoothed record) fill in only where no raw position lies within
/// ``rawCoverage`` seconds, as the raw signals usually cover only the last weeks. Google's own
/// visits and activities are not read: Fencepost's events come from its monitor.
///
/// Streamed one element at a time. Path points read before the raw signals (Android writes
/// them first) wait in a temporary file until the raw signals have shown which times they
/// cover, so memory stays flat; fixes therefore come out of time order, as ingest allows.
package struct TimelineTraceReader: TraceReader {
    /// Seconds either side of a raw position in which path points are left to the raw signals.
    package static let rawCoverage: Double = 900

    private var stream: JSONArrayStream
    private let device: String
    /// iOS exports have no raw signals: their path points are fixes at once.
    private let hasRawSignals: Bool
    private var coverage = TimeCoverage()
    private var rawSignalsStarted = false
    private var streamEnded = false
    private var heldBack: PointSpool
    /// Path points of the segment being read that are ready to go out.
    private var pending: [Fix] = []
    private var pendingIndex = 0
    package private(set) var skipped: [String: Int] = [:]

    package init(source: ByteSource, device: String) throws(TraceReadError) {
        let head = try source.peek()
        let start = head.first { ![0x20, 0x09, 0x0D, 0x0A, 0xEF, 0xBB, 0xBF].contains($0) }
        hasRawSignals = start != UInt8(ascii: "[")
        stream =
            hasRawSignals
            ? JSONArrayStream(source: source, keys: ["semanticSegments", "rawSignals"])
            : JSONArrayStream(topLevelArrayOf: source)
        self.device = device
        heldBack = PointSpool(name: source.name)
    }

    package mutating func next() throws(TraceReadError) -> Fix? {
        while true {
            if pendingIndex < pending.count {
                defer { pendingIndex += 1 }
                return pending[pendingIndex]
            }
            pending.removeAll(keepingCapacity: true)
            pendingIndex = 0
            if streamEnded {
                // Every raw signal is in: the held-back path points go where none covers them.
                while let point = try heldBack.next() {
                    if !coverage.contains(point.time) { return fix(point) }
                }
                return nil
            }
            guard let element = try stream.next() else {
                streamEnded = true
                continue
            }
            if stream.key == "rawSignals" {
                rawSignalsStarted = true
                if let fix = rawSignal(element) { return fix }
            } else {
                try segment(element)
            }
        }
    }

    // MARK: - Elements

    /// A raw signal's position as a fix; nil for the other signals (Wi-Fi scans, activity
    /// records) and for positions without a usable time or place (counted).
    private mutating func rawSignal(_ signal: JSONValue) -> Fix? {
        guard let position = signal["position"] else { return nil }
        guard let time = position["timestamp"]?.stringValue.flatMap(Timestamp.parse) else {
            skipped["missing_or_bad_time", default: 0] += 1
            return nil
        }
        guard let place = (position["LatLng"] ?? position["latLng"])?.stringValue.flatMap(Self.position) else {
            skipped["missing_or_bad_coordinates", default: 0] += 1
            return nil
        }
        coverage.insert(time, margin: Self.rawCoverage)
        return Fix(
            device: device, time: time, lat: place.lat, lon: place.lon,
            accuracy: Self.number(position["accuracyMeters"]), altitude: Self.number(position["altitudeMeters"]),
            speed: Self.number(position["speedMetersPerSecond"]))
    }

    /// A segment's timeline path points: out at once when every raw signal has been read (or
    /// there are none), else held back. Visits, activities and memories carry no path.
    private mutating func segment(_ segment: JSONValue) throws(TraceReadError) {
        guard let path = segment["timelinePath"]?.arrayValue else { return }
        let start = segment["startTime"]?.stringValue.flatMap(Timestamp.parse)
        let rawSignalsRead = !hasRawSignals || rawSignalsStarted
        for point in path {
            let time: Double?
            if let text = point["time"]?.stringValue {
                time = Timestamp.parse(text)
            } else if let start, let minutes = Self.number(point["durationMinutesOffsetFromStartTime"]) {
                time = start + minutes * 60
            } else {
                time = nil
            }
            guard let time else {
                skipped["missing_or_bad_time", default: 0] += 1
                continue
            }
            guard let place = point["point"]?.stringValue.flatMap(Self.position) else {
                skipped["missing_or_bad_coordinates", default: 0] += 1
                continue
            }
            let spooled = PointSpool.Point(time: time, lat: place.lat, lon: place.lon)
            if !rawSignalsRead {
                try heldBack.append(spooled)
            } else if !coverage.contains(time) {
                pending.append(fix(spooled))
            }
        }
    }

    private func fix(_ point: PointSpool.Point) -> Fix {
        Fix(device: device, time: point.time, lat: point.lat, lon: point.lon)
    }

    // MARK: - Values

    /// `"47.3769°, 8.5417°"` or `"geo:47.3769,8.5417"`: latitude first.
    static func position(_ text: String) -> (lat: Double, lon: Double)? {
        var body = Substring(text)
        if body.hasPrefix("geo:") { body = body.dropFirst(4) }
        let parts = body.split(separator: ",", omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        func degrees(_ part: Substring) -> Double? {
            var value = part.trimmingPrefix(while: \.isWhitespace)
            while let last = value.last, last.isWhitespace || last == "°" { value = value.dropLast() }
            return Double(value)
        }
        guard let lat = degrees(parts[0]), let lon = degrees(parts[1]), lat.isFinite, lon.isFinite else { return nil }
        return (lat, lon)
    }

    /// A number, or a string holding one (iOS writes most numbers as strings).
    static func number(_ value: JSONValue?) -> Double? {
        value?.numberValue ?? value?.stringValue.flatMap { Double($0) }
    }
}

/// The times raw positions cover, each `margin` seconds either side: sorted, disjoint
/// intervals, one per stretch of recording, so a year of raw signals is a few thousand at most.
struct TimeCoverage {
    private var starts: [Double] = []
    private var ends: [Double] = []

    mutating func insert(_ time: Double, margin: Double) {
        var low = time - margin
        var high = time + margin
        // The first interval reaching `low`, then every one that overlaps the new one.
        let first = firstEnd(atLeast: low)
        var last = first
        while last < starts.count, starts[last] <= high {
            low = min(low, starts[last])
            high = max(high, ends[last])
            last += 1
        }
        starts.replaceSubrange(first..<last, with: [low])
        ends.replaceSubrange(first..<last, with: [high])
    }

    func contains(_ time: Double) -> Bool {
        let index = firstEnd(atLeast: time)
        return index < starts.count && starts[index] <= time
    }

    /// The index of the first interval whose end is at or after `time`.
    private func firstEnd(atLeast time: Double) -> Int {
        ends.partitionPoint { $0 >= time }
    }
}
