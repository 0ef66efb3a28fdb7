public import FencepostCore

/// CSV traces with a header row: `time|timestamp|date|tracked_at`, `lat|latitude`,
/// `lon|lng|longitude`, optional `accuracy|hdop`, `altitude|alt|ele|elevation`, `speed`,
/// `device|device_id|user_id|tid`; separated by `,`, `;` or tabs.
public struct CSVTraceReader: TraceReader {
    private var lines: LineReader
    private let device: String
    private var columns: Columns
    private let separator: UInt8
    public private(set) var skipped: [String: Int] = [:]

    struct Columns {
        var time: Int
        var lat: Int
        var lon: Int
        var accuracy: Int?
        /// HDOP is unitless: times a typical 5 m user range error it approximates metres.
        var accuracyIsHDOP = false
        var altitude: Int?
        var speed: Int?
        var device: Int?
    }

    static let timeNames: Set<String> = ["time", "timestamp", "date", "datetime", "tracked_at", "time_utc", "utc"]
    static let latNames: Set<String> = ["lat", "latitude"]
    static let lonNames: Set<String> = ["lon", "lng", "long", "longitude"]

    /// Reads the header; `device` names fixes from files without a device column.
    public init(source: ByteSource, device: String) throws(TraceReadError) {
        self.lines = LineReader(source: source)
        self.device = device
        guard let header = try lines.next() else {
            throw TraceReadError(file: source.name, line: 1, reason: "empty file: expected a CSV header")
        }
        let commas = header.count { $0 == UInt8(ascii: ",") }
        let semicolons = header.count { $0 == UInt8(ascii: ";") }
        let tabs = header.count { $0 == 0x09 }
        separator = tabs > max(commas, semicolons) ? 0x09 : (semicolons > commas ? UInt8(ascii: ";") : UInt8(ascii: ","))
        let names = Self.split(header, separator: separator).map {
            FieldParser.string($0).lowercased().trimmingQuotes()
        }
        func index(_ candidates: Set<String>) -> Int? { names.firstIndex { candidates.contains($0) } }
        guard let time = index(Self.timeNames), let lat = index(Self.latNames), let lon = index(Self.lonNames) else {
            throw TraceReadError(
                file: source.name, line: 1,
                reason: "CSV header needs time (time|timestamp|date), latitude (lat|latitude) and longitude (lon|lng|longitude) columns; found: \(names.joined(separator: ", "))")
        }
        columns = Columns(time: time, lat: lat, lon: lon)
        if let accuracy = index(["accuracy", "acc", "horizontal_accuracy", "hacc"]) {
            columns.accuracy = accuracy
        } else if let hdop = index(["hdop"]) {
            columns.accuracy = hdop
            columns.accuracyIsHDOP = true
        }
        columns.altitude = index(["altitude", "alt", "ele", "elevation"])
        columns.speed = index(["speed"])
        columns.device = index(["device", "device_id", "user_id", "tid"])
    }

    public mutating func next() throws(TraceReadError) -> Fix? {
        while let line = try lines.next() {
            if FieldParser.trim(line).isEmpty { continue }
            let fields = Self.split(line, separator: separator)
            func field(_ index: Int?) -> ArraySlice<UInt8>? {
                guard let index, index < fields.count else { return nil }
                let value = FieldParser.trim(fields[index])
                return value.isEmpty ? nil : value
            }
            guard let timeField = field(columns.time), let time = FieldParser.time(timeField) else {
                skipped["missing_or_bad_time", default: 0] += 1
                continue
            }
            guard let lat = field(columns.lat).flatMap(FieldParser.double), let lon = field(columns.lon).flatMap(FieldParser.double),
                lat.isFinite, lon.isFinite
            else {
                skipped["missing_or_bad_coordinates", default: 0] += 1
                continue
            }
            var accuracy = field(columns.accuracy).flatMap(FieldParser.double)
            if columns.accuracyIsHDOP, let hdop = accuracy { accuracy = hdop * 5 }
            let device = field(columns.device).map { FieldParser.string($0).trimmingQuotes() } ?? self.device
            return Fix(
                device: device, time: time, lat: lat, lon: lon, accuracy: accuracy,
                altitude: field(columns.altitude).flatMap(FieldParser.double),
                speed: field(columns.speed).flatMap(FieldParser.double))
        }
        return nil
    }

    /// Fields of one line; double quotes protect separators (no escaped quotes inside).
    static func split(_ line: ArraySlice<UInt8>, separator: UInt8) -> [ArraySlice<UInt8>] {
        var fields: [ArraySlice<UInt8>] = []
        var start = line.startIndex
        var quoted = false
        var index = line.startIndex
        while index < line.endIndex {
            let byte = line[index]
            if byte == UInt8(ascii: "\"") {
                quoted.toggle()
            } else if byte == separator, !quoted {
                fields.append(unquote(line[start..<index]))
                start = index + 1
            }
            index += 1
        }
        fields.append(unquote(line[start..<line.endIndex]))
        return fields
    }

    private static func unquote(_ field: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        let trimmed = FieldParser.trim(field)
        if trimmed.count >= 2, trimmed.first == UInt8(ascii: "\""), trimmed.last == UInt8(ascii: "\"") {
            return trimmed.dropFirst().dropLast()
        }
        return trimmed
    }
}

extension String {
    func trimmingQuotes() -> String {
        guard count >= 2, first == "\"", last == "\"" else { return self }
        return String(dropFirst().dropLast())
    }
}
