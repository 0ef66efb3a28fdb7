public import FencepostCore

/// A streaming source of fixes from one input.
///
/// A malformed input throws ``TraceReadError`` naming the file, line and reason; a bad record
/// inside a good input (no time, a coordinate that is not a number) is skipped and counted.
public protocol TraceReader {
    /// The next fix, or nil at the end of the input.
    mutating func next() throws(TraceReadError) -> Fix?
    /// Records skipped so far, by reason.
    var skipped: [String: Int] { get }
}

/// The formats Fencepost reads.
public enum TraceFormat: String, Sendable, CaseIterable {
    case gpx, geojson, csv, takeout, plt, owntracks, tcx
}

/// Parses numbers straight from UTF-8 bytes without making a String per field.
enum FieldParser {
    static func double(_ bytes: ArraySlice<UInt8>) -> Double? {
        DecimalParser.parse(trim(bytes))
    }

    static func trim(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        var slice = bytes
        while let first = slice.first, first == 0x20 || first == 0x09 { slice.removeFirst() }
        while let last = slice.last, last == 0x20 || last == 0x09 { slice.removeLast() }
        return slice
    }

    static func string(_ bytes: ArraySlice<UInt8>) -> String {
        String(decoding: trim(bytes), as: UTF8.self)
    }
}
