package import FencepostCore

/// Google Takeout's Semantic Location History, one file a month
/// (`Semantic Location History/2021/2021_AUGUST.json`): `timelineObjects`, each a `placeVisit`
/// or an `activitySegment`. The fixes are
///
/// - a place visit's `location` (`latitudeE7`, `longitudeE7`; the visit's `centerLatE7`,
///   `centerLngE7` when the location has none) at its `duration`'s start and at its end, so a
///   stay lasts as long as Google says it did;
/// - an activity segment's `startLocation` at its start and `endLocation` at its end;
/// - the `simplifiedRawPath` points of either (`latE7`, `lngE7`, `accuracyMeters` and a
///   `timestamp` or `timestampMs`): positions the phone measured.
///
/// Times are RFC 3339 (`startTimestamp`, `timestamp`) in newer exports and milliseconds since
/// 1970 (`startTimestampMs`, `timestampMs`) in older ones. An activity segment's
/// `waypointPath` points carry no time: they are Google's road-snapped reconstruction of the
/// route, not measurements, and times spread evenly over the segment would put the device at
/// places it was not at the time given (a stop at lights, a slow stretch), so they are skipped
/// and counted (`untimed_waypoint`). A place's candidate alternatives and child visits are
/// not read.
///
/// Where a segment ends at the instant a place visit starts, the visit's location is kept and
/// the segment's `endLocation` dropped: Google's segment ends lie a median 87 m from the place
/// it names, and up to kilometres (in the sample month 13 of 116 over 200 m, two over 1 km),
/// while the visit's location is where the stay was. (A segment's start at a visit's end is
/// dropped by the fix filter as a repeated time, the visit's fix coming first.)
///
/// Streamed one timeline object at a time; each object's fixes come out in time order, and
/// the objects in the file's (Google writes them in time order; ingest sorts what is not).
package struct SemanticHistoryTraceReader: TraceReader {
    private var stream: JSONArrayStream
    private let device: String
    private var pending: [Fix] = []
    private var pendingIndex = 0
    /// The end of the last activity segment, held until the next object says whether a place
    /// visit starts at the same instant.
    private var segmentEnd: Fix?
    package private(set) var skipped: [String: Int] = [:]

    package init(source: ByteSource, device: String) {
        stream = JSONArrayStream(source: source, key: "timelineObjects")
        self.device = device
    }

    package mutating func next() throws(TraceReadError) -> Fix? {
        while true {
            if pendingIndex < pending.count {
                defer { pendingIndex += 1 }
                return pending[pendingIndex]
            }
            pending.removeAll(keepingCapacity: true)
            pendingIndex = 0
            guard let object = try stream.next() else {
                defer { segmentEnd = nil }
                return segmentEnd
            }
            let held = segmentEnd
            segmentEnd = nil
            if let visit = object["placeVisit"] {
                if let held, held.time != duration(visit).start { pending.append(held) }
                placeVisit(visit)
            } else {
                if let held { pending.append(held) }
                if let segment = object["activitySegment"] {
                    activitySegment(segment)
                } else {
                    skipped["unknown_timeline_object", default: 0] += 1
                }
            }
            pending.sort { $0.time < $1.time }
        }
    }

    // MARK: - Timeline objects

    private mutating func placeVisit(_ visit: JSONValue) {
        let (start, end) = duration(visit)
        if let location = visit["location"], location["latitudeE7"] != nil {
            add(location, latKey: "latitudeE7", lonKey: "longitudeE7", time: start, accuracyKey: "accuracyMetres")
            add(location, latKey: "latitudeE7", lonKey: "longitudeE7", time: end, accuracyKey: "accuracyMetres")
        } else {
            add(visit, latKey: "centerLatE7", lonKey: "centerLngE7", time: start, accuracyKey: nil)
            add(visit, latKey: "centerLatE7", lonKey: "centerLngE7", time: end, accuracyKey: nil)
        }
        rawPath(visit)
    }

    private mutating func activitySegment(_ segment: JSONValue) {
        let (start, end) = duration(segment)
        add(
            segment["startLocation"], latKey: "latitudeE7", lonKey: "longitudeE7", time: start,
            accuracyKey: "accuracyMetres")
        segmentEnd = fix(
            segment["endLocation"], latKey: "latitudeE7", lonKey: "longitudeE7", time: end,
            accuracyKey: "accuracyMetres")
        if let waypoints = segment["waypointPath"]?["waypoints"]?.arrayValue, !waypoints.isEmpty {
            skipped["untimed_waypoint", default: 0] += waypoints.count
        }
        rawPath(segment)
    }

    private mutating func rawPath(_ object: JSONValue) {
        guard let points = object["simplifiedRawPath"]?["points"]?.arrayValue else { return }
        for point in points {
            let time = Self.time(point, "timestamp")
            add(point, latKey: "latE7", lonKey: "lngE7", time: time, accuracyKey: "accuracyMeters")
        }
    }

    /// A visit's or segment's start and end.
    private func duration(_ object: JSONValue) -> (start: Double?, end: Double?) {
        let duration = object["duration"]
        return (Self.time(duration, "startTimestamp"), Self.time(duration, "endTimestamp"))
    }

    /// Adds the fix at `location` to the object's (see ``fix(_:latKey:lonKey:time:accuracyKey:)``).
    private mutating func add(
        _ location: JSONValue?, latKey: String, lonKey: String, time: Double?, accuracyKey: String?
    ) {
        if let fix = fix(location, latKey: latKey, lonKey: lonKey, time: time, accuracyKey: accuracyKey) {
            pending.append(fix)
        }
    }

    /// A fix at `location` (E7 coordinates under the keys given) at `time`; nil, skipped and
    /// counted, when either is missing or unreadable.
    private mutating func fix(
        _ location: JSONValue?, latKey: String, lonKey: String, time: Double?, accuracyKey: String?
    ) -> Fix? {
        guard let time else {
            skipped["missing_or_bad_time", default: 0] += 1
            return nil
        }
        guard let latE7 = location?[latKey]?.numberValue, let lonE7 = location?[lonKey]?.numberValue,
            abs(latE7) <= 90e7, abs(lonE7) <= 180e7
        else {
            skipped["missing_or_bad_coordinates", default: 0] += 1
            return nil
        }
        let accuracy = accuracyKey.flatMap { location?[$0]?.numberValue }
        return Fix(device: device, time: time, lat: latE7 / 1e7, lon: lonE7 / 1e7, accuracy: accuracy)
    }

    /// `key` as RFC 3339 text, or `keyMs` as milliseconds since 1970 (a string or a number).
    static func time(_ object: JSONValue?, _ key: String) -> Double? {
        if let text = object?[key]?.stringValue { return Timestamp.parse(text) }
        let milliseconds = object?[key + "Ms"]
        guard let value = milliseconds?.numberValue ?? milliseconds?.stringValue.flatMap({ Double($0) }),
            value.isFinite
        else { return nil }
        return value / 1000
    }
}
