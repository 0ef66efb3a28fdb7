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
            String(decoding: Self.trim($0), as: UTF8.self).lowercased().trimmingQuotes()
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
            if Self.trim(line).isEmpty { continue }
            if let fix = parse(line) { return fix }
        }
        return nil
    }

    /// One record, or nil when it is skipped (and counted).
    private mutating func parse(_ line: ArraySlice<UInt8>) -> Fix? {
        if line.contains(UInt8(ascii: "\"")) {
            // Quoted fields take the general path: unquoted fields laid end to end.
            var buffer: [UInt8] = []
            var bounds = FieldBounds()
            for (index, field) in Self.split(line, separator: separator).enumerated() {
                bounds.record(index, buffer.count..<(buffer.count + field.count), columns)
                buffer.append(contentsOf: field)
            }
            return buffer.withUnsafeBufferPointer { parse($0, bounds: bounds) }
        }
        return line.withUnsafeBufferPointer { bytes in
            // Field boundaries in one pass over the bytes, without allocating.
            var bounds = FieldBounds()
            var fieldIndex = 0
            var fieldStart = 0
            for index in 0..<bytes.count where bytes[index] == separator {
                bounds.record(fieldIndex, fieldStart..<index, columns)
                fieldIndex += 1
                fieldStart = index + 1
            }
            bounds.record(fieldIndex, fieldStart..<bytes.count, columns)
            return parse(bytes, bounds: bounds)
        }
    }

    private mutating func parse(_ line: UnsafeBufferPointer<UInt8>, bounds: FieldBounds) -> Fix? {
        func bytes(_ range: Range<Int>?) -> UnsafeBufferPointer<UInt8>? {
            guard let range else { return nil }
            let field = Self.trim(UnsafeBufferPointer(rebasing: line[range]))
            return field.isEmpty ? nil : field
        }
        guard let timeField = bytes(bounds.time), let time = Self.time(timeField) else {
            skipped["missing_or_bad_time", default: 0] += 1
            return nil
        }
        guard let lat = bytes(bounds.lat).flatMap(DecimalParser.parse), let lon = bytes(bounds.lon).flatMap(DecimalParser.parse),
            lat.isFinite, lon.isFinite
        else {
            skipped["missing_or_bad_coordinates", default: 0] += 1
            return nil
        }
        var accuracy = bytes(bounds.accuracy).flatMap(DecimalParser.parse)
        if columns.accuracyIsHDOP, let hdop = accuracy { accuracy = hdop * 5 }
        let device = bytes(bounds.device).map { String(decoding: $0, as: UTF8.self).trimmingQuotes() } ?? self.device
        return Fix(
            device: device, time: time, lat: lat, lon: lon, accuracy: accuracy,
            altitude: bytes(bounds.altitude).flatMap(DecimalParser.parse), speed: bytes(bounds.speed).flatMap(DecimalParser.parse))
    }

    private static func trim(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        var slice = bytes
        while let first = slice.first, first == 0x20 || first == 0x09 { slice.removeFirst() }
        while let last = slice.last, last == 0x20 || last == 0x09 { slice.removeLast() }
        return slice
    }

    private static func trim(_ bytes: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8> {
        var start = 0, end = bytes.count
        while start < end, bytes[start] == 0x20 || bytes[start] == 0x09 { start += 1 }
        while end > start, bytes[end - 1] == 0x20 || bytes[end - 1] == 0x09 || bytes[end - 1] == 0x0D { end -= 1 }
        return UnsafeBufferPointer(rebasing: bytes[start..<end])
    }

    /// A time as RFC 3339 text, or as Unix seconds or milliseconds.
    static func time(_ bytes: UnsafeBufferPointer<UInt8>) -> Double? {
        if bytes.count >= 10, bytes[4] == UInt8(ascii: "-") {
            return Timestamp.parse(utf8: bytes)
        }
        guard let number = DecimalParser.parse(bytes), number.isFinite else { return nil }
        return number > 100_000_000_000 ? number / 1000 : number  // milliseconds since the epoch
    }

    /// Where the fields that matter are in one record.
    private struct FieldBounds {
        var time, lat, lon, accuracy, altitude, speed, device: Range<Int>?

        mutating func record(_ index: Int, _ range: Range<Int>, _ columns: Columns) {
            switch index {
            case columns.time: time = range
            case columns.lat: lat = range
            case columns.lon: lon = range
            case columns.accuracy: accuracy = range
            case columns.altitude: altitude = range
            case columns.speed: speed = range
            case columns.device: device = range
            default: break
            }
        }
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
        let trimmed = Self.trim(field)
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
