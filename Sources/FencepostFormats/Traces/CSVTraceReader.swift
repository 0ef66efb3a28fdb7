package import FencepostCore
import Foundation

/// CSV traces with a header row: `time|timestamp|date|tracked_at|basedatetime`, `lat|latitude`,
/// `lon|lng|longitude`, optional `accuracy|hdop`, `altitude|alt|ele|elevation`, `speed`, and
/// the device: `device|device_id|vehicle_id|mmsi|tid|user_id` (a fleet file: each row names its
/// device); names match without regard to case, and ``TraceReaderOptions`` can name any other
/// header for a role. Separated by `,`, `;` or tabs; fields may be quoted (RFC 4180, `""` for a
/// quote inside). Times without a zone are UTC unless the options give their zone.
///
/// Parsed a chunk at a time: every complete line of a chunk is read in one pass over its bytes,
/// without a copy or an allocation per line, into fixes waiting to be taken.
package struct CSVTraceReader: TraceReader {
    private let source: ByteSource
    private let device: String
    private let columns: Columns
    private let separator: UInt8
    /// The zone of times written without one; nil: UTC.
    private var zone: LocalTimeZone?
    /// The date of the last time read: the rows of a day share theirs.
    private var dates = DateMemo()
    /// Bytes read but not parsed yet: the start of a line that the next chunk completes.
    private var pending: [UInt8] = []
    private var finished = false
    /// Fixes parsed from the last chunk, and the next one to hand out.
    private var parsed: [Fix] = []
    private var nextParsed = 0
    /// The device column's values seen, by a hash of their bytes: a fleet's rows repeat a few
    /// names, each made into a string once.
    private var knownDevices: [UInt64: String] = [:]
    /// The most names kept; past it the table starts over, so memory stays bounded.
    private static let devicesKept = 100_000
    package private(set) var skipped: [String: Int] = [:]

    /// Where the fields that matter are: each field index's role.
    struct Columns {
        enum Role: UInt8 { case none, time, lat, lon, accuracy, altitude, speed, device }

        var roles: [Role] {
            didSet { lastUsed = roles.lastIndex { $0 != .none } ?? 0 }
        }
        /// The last field that has a role: the rest of a line is not looked at.
        private(set) var lastUsed = 0
        /// HDOP is unitless: times a typical 5 m user range error it approximates metres.
        var accuracyIsHDOP = false

        init(roles: [Role]) {
            self.roles = roles
            lastUsed = roles.lastIndex { $0 != .none } ?? 0
        }
    }

    /// The header names each column goes by, in any case, in the order help texts list them
    /// (the one list both the help and the errors use).
    package static let timeNames = [
        "time", "timestamp", "date", "datetime", "tracked_at", "time_utc", "utc", "basedatetime",
    ]
    package static let latNames = ["lat", "latitude"]
    package static let lonNames = ["lon", "lng", "long", "longitude"]
    package static let accuracyNames = ["accuracy", "acc", "horizontal_accuracy", "hacc"]
    /// The columns that name a fleet file's devices (AIS exports have `MMSI`, OwnTracks' CSV
    /// `tid`, telematics dumps `vehicle_id`).
    package static let deviceNames = ["device", "device_id", "vehicle_id", "mmsi", "tid", "user_id"]

    /// `a, b or c`.
    package static func spoken(_ names: [String]) -> String {
        names.count < 2 ? names.joined() : names.dropLast().joined(separator: ", ") + " or " + names.last!
    }

    /// Reads the header; `device` names fixes from files without a device column. The options'
    /// column names choose those columns over the usual names (a named column the header lacks
    /// refuses the file); their zone is that of times written without one. The options' own
    /// `device` is applied by ``TraceOpener``, over this reader's names.
    package init(source: ByteSource, device: String, options: TraceReaderOptions = TraceReaderOptions())
        throws(TraceReadError)
    {
        self.source = source
        self.device = device
        self.zone = options.zone
        guard let header = try Self.readHeader(source, rest: &pending, finished: &finished) else {
            throw TraceReadError(file: source.name, line: 1, reason: "empty file: expected a CSV header")
        }
        let commas = header.count { $0 == UInt8(ascii: ",") }
        let semicolons = header.count { $0 == UInt8(ascii: ";") }
        let tabs = header.count { $0 == 0x09 }
        separator =
            tabs > max(commas, semicolons) ? 0x09 : (semicolons > commas ? UInt8(ascii: ";") : UInt8(ascii: ","))
        // A first line with control characters or bytes that are not UTF-8 is no CSV header:
        // say so, rather than echo a binary file's bytes as its column names.
        if header.contains(where: { $0 < 0x20 && $0 != 0x09 }) || String(validating: header, as: UTF8.self) == nil {
            throw TraceReadError(
                file: source.name, line: 1,
                reason: "not a trace: its first line is not text (a binary file?); traces are GPX, GeoJSON, CSV, "
                    + "Google Takeout or Timeline JSON, GeoLife .plt, OwnTracks .rec or TCX, gzip-compressed or not")
        }
        let written = Self.fields(header[...], separator: separator).map { String(decoding: $0, as: UTF8.self) }
        let names = written.map { $0.lowercased() }
        func index(_ candidates: [String]) -> Int? { names.firstIndex { candidates.contains($0) } }
        /// The column named in the options (it must exist), else the first of the usual names.
        func column(_ named: String?, _ role: String, usual: [String]) throws(TraceReadError) -> Int? {
            guard let named else { return index(usual) }
            guard let found = names.firstIndex(of: named.lowercased()) else {
                throw TraceReadError(
                    file: source.name, line: 1,
                    reason:
                        "no column \"\(named)\" for the \(role) in the CSV header; found: \(Self.shown(written))"
                )
            }
            return found
        }
        let time = try column(options.timeColumn, "time", usual: Self.timeNames)
        let lat = try column(options.latColumn, "latitude", usual: Self.latNames)
        let lon = try column(options.lonColumn, "longitude", usual: Self.lonNames)
        guard let time, let lat, let lon else {
            throw TraceReadError(
                file: source.name, line: 1,
                reason:
                    "CSV header needs time (\(Self.timeNames.joined(separator: "|"))), latitude (\(Self.latNames.joined(separator: "|"))) and longitude (\(Self.lonNames.joined(separator: "|"))) columns, in any case, or their names given (--time-column, --lat-column, --lon-column); found: \(Self.shown(written))"
            )
        }
        var columns = Columns(roles: Array(repeating: .none, count: names.count))
        if let altitude = index(["altitude", "alt", "ele", "elevation"]) { columns.roles[altitude] = .altitude }
        if let speed = index(["speed"]) { columns.roles[speed] = .speed }
        // A device given names every fix (``TraceOpener``): the column is not read.
        if options.device == nil, let device = try column(options.deviceColumn, "device", usual: Self.deviceNames) {
            columns.roles[device] = .device
        }
        if let accuracy = try column(options.accuracyColumn, "accuracy", usual: Self.accuracyNames) {
            columns.roles[accuracy] = .accuracy
        } else if let hdop = index(["hdop"]) {
            columns.roles[hdop] = .accuracy
            columns.accuracyIsHDOP = true
        }
        // The roles that must be found win a column named twice.
        columns.roles[time] = .time
        columns.roles[lat] = .lat
        columns.roles[lon] = .lon
        self.columns = columns
    }

    package mutating func next() throws(TraceReadError) -> Fix? {
        while nextParsed == parsed.count {
            guard try parseNextChunk() else { return nil }
        }
        defer { nextParsed += 1 }
        return parsed[nextParsed]
    }

    /// Up to `size` of the fixes parsed from the current chunk, taken in one copy: no call per
    /// fix. (Handing a chunk's parsed fixes over whole, a few thousand in a new array each time,
    /// grew the peak memory by 5 MiB through the allocator.)
    package mutating func nextBatch(upTo size: Int) throws(TraceReadError) -> [Fix]? {
        while nextParsed == parsed.count {
            guard try parseNextChunk() else { return nil }
        }
        let end = min(parsed.count, nextParsed + max(size, 1))
        defer { nextParsed = end }
        return Array(parsed[nextParsed..<end])
    }

    // MARK: - Chunks and lines

    /// The header line (its bytes, without the line break), reading chunks until it is whole;
    /// what follows it is left in `rest`.
    private static func readHeader(_ source: ByteSource, rest: inout [UInt8], finished: inout Bool)
        throws(TraceReadError) -> [UInt8]?
    {
        var bytes: [UInt8] = []
        while true {
            if let newline = bytes.firstIndex(of: 0x0A) {
                rest = Array(bytes[(newline + 1)...])
                return trimmingLineEnd(bytes[..<newline])
            }
            guard let chunk = try source.read() else {
                finished = true
                return bytes.isEmpty ? nil : trimmingLineEnd(bytes[...])
            }
            bytes.append(contentsOf: chunk)
        }
    }

    private static func trimmingLineEnd(_ line: ArraySlice<UInt8>) -> [UInt8] {
        var line = line
        if line.last == 0x0D { line = line.dropLast() }
        if line.starts(with: [0xEF, 0xBB, 0xBF]) { line = line.dropFirst(3) }  // a byte order mark
        return Array(line)
    }

    /// Reads the next chunk and parses every line it completes; false at the end of the input.
    private mutating func parseNextChunk() throws(TraceReadError) -> Bool {
        parsed.removeAll(keepingCapacity: true)
        nextParsed = 0
        if finished {
            guard !pending.isEmpty else { return false }
            parseLines(upTo: pending.count)  // the last line, without a line break
            pending.removeAll()
            return true
        }
        if let chunk = try source.read() {
            pending.append(contentsOf: chunk)
        } else {
            finished = true
        }
        guard let lastBreak = pending.lastIndex(of: 0x0A) else { return true }
        parseLines(upTo: lastBreak + 1)
        pending.removeFirst(lastBreak + 1)
        return true
    }

    /// Parses the lines in `pending[..<end]`.
    private mutating func parseLines(upTo end: Int) {
        let pending = self.pending
        self.pending = []
        defer { self.pending = pending }
        pending.withUnsafeBufferPointer { all in
            let bytes = UnsafeBufferPointer(rebasing: all[..<end])
            guard let base = bytes.baseAddress else { return }
            var start = 0
            while start < bytes.count {
                var lineEnd = bytes.count
                if let newline = memchr(base + start, 0x0A, bytes.count - start) {
                    lineEnd = base.distance(to: newline.assumingMemoryBound(to: UInt8.self))
                }
                var end = lineEnd
                if end > start, bytes[end - 1] == 0x0D { end -= 1 }
                parse(UnsafeBufferPointer(rebasing: bytes[start..<end]))
                start = lineEnd + 1
            }
        }
    }

    // MARK: - Records

    /// Where one record's fields that matter are, as ranges of the line.
    private struct Fields {
        var time, lat, lon, accuracy, altitude, speed, device: Range<Int>?

        mutating func set(_ role: Columns.Role, _ range: Range<Int>) {
            switch role {
            case .none: break
            case .time: time = range
            case .lat: lat = range
            case .lon: lon = range
            case .accuracy: accuracy = range
            case .altitude: altitude = range
            case .speed: speed = range
            case .device: device = range
            }
        }
    }

    /// One record (a blank line is none); a record without a usable time or position is
    /// skipped and counted. The fields up to the last one used are found by searching for each
    /// separator, and that stretch of the line for a quote, rather than by a look at each byte.
    private mutating func parse(_ line: UnsafeBufferPointer<UInt8>) {
        guard let base = line.baseAddress, !line.isEmpty else { return }
        var fields = Fields()
        let (separator, lastUsed, count) = (Int32(self.separator), columns.lastUsed, line.count)
        // Where the fields that matter end: at the separator after the last one used, or the line's end.
        var scannedEnd = count
        columns.roles.withUnsafeBufferPointer { roles in
            var index = 0
            var fieldStart = 0
            while let found = memchr(base + fieldStart, separator, count - fieldStart) {
                let position = base.distance(to: found.assumingMemoryBound(to: UInt8.self))
                fields.set(roles[index], fieldStart..<position)
                index += 1
                fieldStart = position + 1
                if index > lastUsed {
                    scannedEnd = position
                    return
                }
            }
            if index < roles.count { fields.set(roles[index], fieldStart..<count) }
        }
        let quoted = memchr(base, Int32(UInt8(ascii: "\"")), scannedEnd) != nil
        guard quoted else { return record(line, fields) }
        // Quoted fields take the general path: the fields unquoted, laid end to end.
        var unquoted: [UInt8] = []
        fields = Fields()
        for (index, field) in Self.fields(ArraySlice(line), separator: self.separator).enumerated()
        where index < columns.roles.count {
            fields.set(columns.roles[index], unquoted.count..<(unquoted.count + field.count))
            unquoted.append(contentsOf: field)
        }
        unquoted.withUnsafeBufferPointer { record($0, fields) }
    }

    private mutating func record(_ line: UnsafeBufferPointer<UInt8>, _ fields: Fields) {
        func bytes(_ range: Range<Int>?) -> UnsafeBufferPointer<UInt8>? {
            guard let range else { return nil }
            let field = Self.trim(UnsafeBufferPointer(rebasing: line[range]))
            return field.isEmpty ? nil : field
        }
        func number(_ range: Range<Int>?) -> Double? {
            bytes(range).flatMap(DecimalParser.parse)
        }
        guard let timeField = bytes(fields.time), let time = time(timeField) else {
            if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { return }  // a blank line is no record
            skipped["missing_or_bad_time", default: 0] += 1
            return
        }
        guard let lat = number(fields.lat), let lon = number(fields.lon), lat.isFinite, lon.isFinite else {
            skipped["missing_or_bad_coordinates", default: 0] += 1
            return
        }
        var accuracy = number(fields.accuracy)
        if columns.accuracyIsHDOP, let hdop = accuracy { accuracy = hdop * 5 }
        let device = bytes(fields.device).map { deviceName($0) } ?? self.device
        parsed.append(
            Fix(
                device: device, time: time, lat: lat, lon: lon, accuracy: accuracy, altitude: number(fields.altitude),
                speed: number(fields.speed)))
    }

    /// The device named by a device column's bytes, made into a string the first time.
    private mutating func deviceName(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325  // FNV-1a
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01B3 }
        if let name = knownDevices[hash], name.utf8.elementsEqual(bytes) { return name }
        let name = String(decoding: bytes, as: UTF8.self)
        if knownDevices.count >= Self.devicesKept { knownDevices.removeAll(keepingCapacity: true) }
        knownDevices[hash] = name
        return name
    }

    private static func trim(_ bytes: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8> {
        var start = 0
        var end = bytes.count
        while start < end, bytes[start] == 0x20 || bytes[start] == 0x09 { start += 1 }
        while end > start, bytes[end - 1] == 0x20 || bytes[end - 1] == 0x09 { end -= 1 }
        return UnsafeBufferPointer(rebasing: bytes[start..<end])
    }

    /// A time as RFC 3339 text (without a zone: in the reader's zone, else UTC), or as Unix
    /// seconds or milliseconds.
    private mutating func time(_ bytes: UnsafeBufferPointer<UInt8>) -> Double? {
        if bytes.count >= 10, bytes[4] == UInt8(ascii: "-") {
            guard let (seconds, zoned) = Timestamp.parseNotingZone(utf8: bytes, memo: &dates) else { return nil }
            return zoned || zone == nil ? seconds : zone!.utc(fromLocal: seconds)
        }
        guard let number = DecimalParser.parse(bytes), number.isFinite else { return nil }
        return number > 100_000_000_000 ? number / 1000 : number  // milliseconds since the epoch
    }

    /// The fields of one line, unquoted: a field in double quotes may hold separators and
    /// `""` for a quote (RFC 4180); spaces around a field are not part of it.
    static func fields(_ line: ArraySlice<UInt8>, separator: UInt8) -> [[UInt8]] {
        var fields: [[UInt8]] = []
        var field: [UInt8] = []
        var quoted = false
        var wasQuoted = false
        var index = line.startIndex
        func finish() {
            if !wasQuoted {
                while let last = field.last, last == 0x20 || last == 0x09 { field.removeLast() }
            }
            fields.append(field)
            field.removeAll()
            wasQuoted = false
        }
        while index < line.endIndex {
            let byte = line[index]
            index += 1
            if quoted {
                if byte == UInt8(ascii: "\"") {
                    if index < line.endIndex, line[index] == UInt8(ascii: "\"") {
                        field.append(byte)  // "" inside quotes: one quote
                        index += 1
                    } else {
                        quoted = false
                    }
                } else {
                    field.append(byte)
                }
            } else if byte == separator {
                finish()
            } else if byte == UInt8(ascii: "\""), field.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) {
                field.removeAll()
                quoted = true
                wasQuoted = true
            } else if !(field.isEmpty && (byte == 0x20 || byte == 0x09)) {
                field.append(byte)
            }
        }
        finish()
        return fields
    }
}

extension CSVTraceReader {
    /// A header's names as written, for an error: at most 20, each cut at 40 characters.
    static func shown(_ names: [String]) -> String {
        let cut = names.prefix(20).map { $0.count > 40 ? $0.prefix(39) + "…" : $0 }
        return cut.joined(separator: ", ") + (names.count > 20 ? ", … (\(names.count) columns)" : "")
    }
}
