import FencepostCore
package import FencepostFormats

/// Reads an Apple Health `export.xml` item by item, streaming: `Record`s (metadata dropped),
/// `Correlation`s with their records, `Workout`s with statistics, events and route, and
/// `ActivitySummary`s. The DTD preamble is skipped by the XML parser.
///
/// A date in a format other than the export's (`2023-01-14 07:35:00 -0500`) is an error naming
/// the line: the whole export is refused rather than guessed at.
package struct HealthExportReader {
    private var parser: XMLPullParser
    private var depth = 0
    /// Whether the document's root element was read: a file with none is no export.
    private var sawRoot = false

    package init(source: ByteSource) {
        parser = XMLPullParser(source: source)
    }

    package var line: Int { parser.line }

    /// The next item, or nil at the end of the document.
    package mutating func next() throws(TraceReadError) -> HealthItem? {
        while let event = try parser.next() {
            switch event {
            case .start(let name, let attributes):
                depth += 1
                sawRoot = true
                // Depth 1 is <HealthData>; its children are the items.
                if depth == 1, name != "HealthData" {
                    throw TraceReadError(
                        file: parser.name, line: parser.line,
                        reason: "not an Apple Health export: its root is <\(name)>, not <HealthData> "
                            + "(export.zip or its export.xml, from the Health app's Export All Health Data)")
                }
                guard depth == 2 else { continue }
                switch name {
                case "Record":
                    let record = try record(attributes)
                    try skipToEnd(of: name)
                    return .record(record)
                case "Correlation":
                    return .correlation(try correlation(attributes))
                case "Workout":
                    return .workout(try workout(attributes))
                case "ActivitySummary":
                    try skipToEnd(of: name)
                    return .activitySummary(date: attributes["dateComponents"] ?? "")
                case "ExportDate", "Me":
                    try skipToEnd(of: name)
                default:
                    try skipToEnd(of: name)
                    return .other(name)
                }
            case .end:
                depth -= 1
            case .text:
                continue
            }
        }
        if !sawRoot {
            throw TraceReadError(
                file: parser.name, line: parser.line,
                reason: "not an Apple Health export: no <HealthData> element (export.zip or its export.xml, "
                    + "from the Health app's Export All Health Data)")
        }
        return nil
    }

    // MARK: - Items

    private func record(_ attributes: [String: String]) throws(TraceReadError) -> HealthRecord {
        HealthRecord(
            type: try required("type", of: "Record", attributes),
            source: try required("sourceName", of: "Record", attributes),
            unit: attributes["unit"], value: attributes["value"],
            start: try date("startDate", of: "Record", attributes), end: try date("endDate", of: "Record", attributes),
            creation: try optionalDate("creationDate", of: "Record", attributes))
    }

    private mutating func correlation(_ attributes: [String: String]) throws(TraceReadError) -> HealthCorrelation {
        var correlation = HealthCorrelation(
            type: try required("type", of: "Correlation", attributes),
            source: try required("sourceName", of: "Correlation", attributes),
            start: try date("startDate", of: "Correlation", attributes),
            end: try date("endDate", of: "Correlation", attributes),
            creation: try optionalDate("creationDate", of: "Correlation", attributes), records: [])
        for (name, attributes) in try children(of: "Correlation") where name == "Record" {
            correlation.records.append(try record(attributes))
        }
        return correlation
    }

    private mutating func workout(_ attributes: [String: String]) throws(TraceReadError) -> HealthWorkout {
        var workout = HealthWorkout(
            activityType: try required("workoutActivityType", of: "Workout", attributes),
            source: try required("sourceName", of: "Workout", attributes),
            start: try date("startDate", of: "Workout", attributes),
            end: try date("endDate", of: "Workout", attributes),
            creation: try optionalDate("creationDate", of: "Workout", attributes))
        workout.duration = HealthUnits.seconds(attributes["duration"], unit: attributes["durationUnit"])
        workout.distanceMetres = HealthUnits.metres(attributes["totalDistance"], unit: attributes["totalDistanceUnit"])
        workout.energyKilocalories = HealthUnits.kilocalories(
            attributes["totalEnergyBurned"], unit: attributes["totalEnergyBurnedUnit"])
        var routeSource: String?
        var routeFile: String?
        var routeFixes: [Fix] = []
        for (name, attributes) in try children(of: "Workout") {
            switch name {
            case "MetadataEntry" where attributes["key"] == "HKTimeZone":
                workout.timeZone = attributes["value"]
            case "WorkoutEvent":
                workout.eventCount += 1
            case "WorkoutStatistics":
                let type = attributes["type"] ?? ""
                if type.hasPrefix("HKQuantityTypeIdentifierDistance"), workout.distanceMetres == nil {
                    workout.distanceMetres = HealthUnits.metres(attributes["sum"], unit: attributes["unit"])
                } else if type == "HKQuantityTypeIdentifierActiveEnergyBurned", workout.energyKilocalories == nil {
                    workout.energyKilocalories = HealthUnits.kilocalories(attributes["sum"], unit: attributes["unit"])
                }
            case "WorkoutRoute":
                routeSource = attributes["sourceName"] ?? workout.source
            case "FileReference":
                routeFile = attributes["path"]
            case "Location":
                let time = try date("date", of: "Location", attributes)
                guard let lat = attributes["latitude"].flatMap(Double.init),
                    let lon = attributes["longitude"].flatMap(Double.init)
                else {
                    throw failure("<Location> without a numeric latitude and longitude")
                }
                routeFixes.append(
                    Fix(
                        device: routeSource ?? workout.source, time: time.seconds, lat: lat, lon: lon,
                        accuracy: attributes["horizontalAccuracy"].flatMap(Double.init),
                        altitude: attributes["altitude"].flatMap(Double.init),
                        speed: attributes["speed"].flatMap(Double.init).flatMap { $0 >= 0 ? $0 : nil }))
            default:
                break
            }
        }
        if let routeFile {
            workout.route = HealthRoute(source: routeSource ?? workout.source, points: .file(routeFile))
        } else if !routeFixes.isEmpty {
            workout.route = HealthRoute(source: routeSource ?? workout.source, points: .inline(routeFixes))
        }
        return workout
    }

    // MARK: - Walking the tree

    /// Every element inside the open `name`, to any depth, read until it closes (an item's
    /// children are few: metadata, statistics, a route's locations).
    private mutating func children(of name: String) throws(TraceReadError) -> [(String, [String: String])] {
        var nested = 0
        var elements: [(String, [String: String])] = []
        while let event = try parser.next() {
            switch event {
            case .start(let child, let attributes):
                nested += 1
                elements.append((child, attributes))
            case .end:
                if nested == 0 {
                    depth -= 1
                    return elements
                }
                nested -= 1
            case .text:
                continue
            }
        }
        throw failure("unexpected end of file inside <\(name)>")
    }

    private mutating func skipToEnd(of name: String) throws(TraceReadError) {
        _ = try children(of: name)
    }

    // MARK: - Attributes

    private func required(_ key: String, of element: String, _ attributes: [String: String]) throws(TraceReadError)
        -> String
    {
        guard let value = attributes[key] else { throw failure("<\(element)> has no \(key)") }
        return value
    }

    private func date(_ key: String, of element: String, _ attributes: [String: String]) throws(TraceReadError)
        -> HealthDate
    {
        let text = try required(key, of: element, attributes)
        guard let date = HealthDate(text) else {
            throw failure(
                "unknown date format \"\(text)\" in \(key) of <\(element)> (expected YYYY-MM-DD HH:MM:SS ±HHMM)")
        }
        return date
    }

    private func optionalDate(_ key: String, of element: String, _ attributes: [String: String]) throws(TraceReadError)
        -> HealthDate?
    {
        attributes[key] == nil ? nil : try date(key, of: element, attributes)
    }

    private func failure(_ reason: String) -> TraceReadError {
        TraceReadError(file: parser.name, line: parser.line, reason: reason)
    }
}
