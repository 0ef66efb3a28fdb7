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
    case gpx, csv
}

/// Parses numbers straight from UTF-8 bytes without making a String per field.
enum FieldParser {
    static func double(_ bytes: ArraySlice<UInt8>) -> Double? {
        let trimmed = trim(bytes)
        guard !trimmed.isEmpty, trimmed.count < 64 else { return nil }
        return trimmed.withUnsafeBufferPointer { buffer in
            Double(Substring(decoding: buffer, as: UTF8.self))
        }
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

    /// A time as RFC 3339 text, or as Unix seconds or milliseconds.
    static func time(_ bytes: ArraySlice<UInt8>) -> Double? {
        let trimmed = trim(bytes)
        guard let first = trimmed.first else { return nil }
        let text = String(decoding: trimmed, as: UTF8.self)
        if trimmed.count >= 10, first >= UInt8(ascii: "0"), first <= UInt8(ascii: "9"),
            trimmed.dropFirst(4).first == UInt8(ascii: "-")
        {
            return Timestamp.parse(text)
        }
        guard let number = Double(text), number.isFinite else { return nil }
        return number > 100_000_000_000 ? number / 1000 : number  // milliseconds since the epoch
    }
}
