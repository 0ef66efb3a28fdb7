import FencepostCore
import Foundation

/// Opens a trace file with the right reader, choosing the format from the content.
package enum TraceOpener {
    /// A reader for `path` (`-` for standard input). `format` nil detects it; `device` nil names
    /// fixes after the file's own device or track name, else the file name.
    package static func open(_ path: String, format: TraceFormat?, device: String?) throws(TraceReadError)
        -> any TraceReader
    {
        try open(ByteSource(path: path), format: format, options: TraceReaderOptions(device: device))
    }

    /// A reader over an opened source (whose `bytesRead` can report progress).
    package static func open(_ source: ByteSource, format: TraceFormat?, device: String?) throws(TraceReadError)
        -> any TraceReader
    {
        try open(source, format: format, options: TraceReaderOptions(device: device))
    }

    /// A reader over an opened source, read as `options` say: fixes without a device of their
    /// own (a CSV device column, a GeoJSON device property, an OwnTracks user/device or `tid`)
    /// are named after the file.
    package static func open(_ source: ByteSource, format: TraceFormat?, options: TraceReaderOptions)
        throws(TraceReadError) -> any TraceReader
    {
        let path = source.name
        let detected: TraceFormat
        if let format { detected = format } else { detected = try detect(source) }
        let device = options.device
        let fallback = device ?? defaultDevice(for: path)
        switch detected {
        case .csv:
            let reader = try CSVTraceReader(source: source, device: fallback, options: options)
            // A device given names every fix, over the file's device column too.
            return device.map { DeviceNamingReader(base: reader, device: $0) } ?? reader
        case .gpx: return GPXTraceReader(source: source, fallbackDevice: fallback, device: device)
        case .geojson: return GeoJSONTraceReader(source: source, fallbackDevice: fallback, options: options)
        case .takeout: return TakeoutTraceReader(source: source, device: fallback)
        case .timeline: return try TimelineTraceReader(source: source, device: fallback)
        case .plt: return PLTTraceReader(source: source, device: device ?? geoLifeUser(for: path) ?? fallback)
        case .owntracks: return OwnTracksTraceReader(source: source, fallbackDevice: fallback, device: device)
        case .tcx: return TCXTraceReader(source: source, device: fallback)
        case .fit: return FITTraceReader(source: source, device: fallback)
        case .semantic: return SemanticHistoryTraceReader(source: source, device: fallback)
        }
    }

    /// The format the first bytes show.
    static func detect(_ source: ByteSource) throws(TraceReadError) -> TraceFormat {
        let head = try source.peek()
        guard !head.isEmpty else { throw TraceReadError(file: source.name, line: nil, reason: "empty file") }
        // Binary: a FIT header's ".FIT" at bytes 8–11.
        if FITHeader.looksLikeFIT(head) { return .fit }
        let text = String(decoding: head.prefix(8192), as: UTF8.self)
        let start = text.drop { $0.isWhitespace || $0 == "\u{FEFF}" }
        if start.hasPrefix("<") {
            if text.contains("<gpx") { return .gpx }
            if text.contains("<TrainingCenterDatabase") { return .tcx }
            throw TraceReadError(file: source.name, line: nil, reason: "unsupported XML trace (GPX or TCX expected)")
        }
        if start.hasPrefix("{") {
            if text.contains("\"semanticSegments\"") || text.contains("\"rawSignals\"") { return .timeline }
            if text.contains("\"timelineObjects\"") { return .semantic }
            if text.contains("\"locations\"") { return .takeout }
            if text.contains("\"features\"") || text.contains("FeatureCollection") { return .geojson }
            throw TraceReadError(
                file: source.name, line: 1,
                reason:
                    "unsupported JSON trace (GeoJSON FeatureCollection, Google Takeout Records.json or Semantic "
                    + "Location History, or Google Timeline expected)"
            )
        }
        if start.hasPrefix("[") {
            // iOS's Timeline export: an array of segments with "geo:lat,lon" positions.
            if text.contains("\"startTime\""), text.contains("geo:") { return .timeline }
            throw TraceReadError(
                file: source.name, line: 1,
                reason: "unsupported JSON array (a Google Timeline export from iOS expected)")
        }
        if start.hasPrefix("Geolife trajectory") { return .plt }
        let firstLine = start.split(separator: "\n", maxSplits: 1).first ?? ""
        if firstLine.count > 21, Timestamp.parse(firstLine.prefix(20)) != nil, firstLine.dropFirst(20).first == "\t" {
            return .owntracks
        }
        if firstLine.contains(",") || firstLine.contains(";") || firstLine.contains("\t") {
            return .csv
        }
        throw TraceReadError(file: source.name, line: 1, reason: "unrecognised trace format; name one with --format")
    }

    /// GeoLife's layout names the person, not the file: `Data/000/Trajectory/20081023025304.plt`
    /// is user `000`'s, one file per day; nil for a file elsewhere.
    static func geoLifeUser(for path: String) -> String? {
        let parts = URL(fileURLWithPath: path).pathComponents
        guard parts.count >= 3, parts[parts.count - 2] == "Trajectory" else { return nil }
        let user = parts[parts.count - 3]
        return user.isEmpty || user == "/" ? nil : user
    }

    /// The file name without directory and extensions: `bus304_to_UL.gpx.gz` → `bus304_to_UL`.
    static func defaultDevice(for path: String) -> String {
        guard path != "-" else { return "stdin" }
        var name = URL(fileURLWithPath: path).lastPathComponent
        while let dot = name.lastIndex(of: "."), dot != name.startIndex {
            name = String(name[..<dot])
        }
        return name.isEmpty ? "device" : name
    }
}

/// Names every fix of another reader after one device.
struct DeviceNamingReader<Base: TraceReader>: TraceReader {
    var base: Base
    let device: String

    var skipped: [String: Int] { base.skipped }

    mutating func next() throws(TraceReadError) -> Fix? {
        guard var fix = try base.next() else { return nil }
        fix.device = device
        return fix
    }

    mutating func nextBatch(upTo size: Int) throws(TraceReadError) -> [Fix]? {
        guard var batch = try base.nextBatch(upTo: size) else { return nil }
        for index in batch.indices { batch[index].device = device }
        return batch
    }
}
