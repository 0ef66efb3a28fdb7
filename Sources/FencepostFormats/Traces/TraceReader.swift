package import FencepostCore

/// A streaming source of fixes from one input.
///
/// A malformed input throws ``TraceReadError`` naming the file, line and reason; a bad record
/// inside a good input (no time, a coordinate that is not a number) is skipped and counted.
package protocol TraceReader {
    /// The next fix, or nil at the end of the input.
    mutating func next() throws(TraceReadError) -> Fix?
    /// Records skipped so far, by reason.
    var skipped: [String: Int] { get }
}

/// The formats Fencepost reads.
package enum TraceFormat: String, Sendable, CaseIterable {
    case gpx, geojson, csv, takeout, timeline, plt, owntracks, tcx, fit, semantic
}
