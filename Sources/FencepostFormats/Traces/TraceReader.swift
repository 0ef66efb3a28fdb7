package import FencepostCore

/// A streaming source of fixes from one input.
///
/// A malformed input throws ``TraceReadError`` naming the file, line and reason; a bad record
/// inside a good input (no time, a coordinate that is not a number) is skipped and counted.
package protocol TraceReader {
    /// The next fix, or nil at the end of the input.
    mutating func next() throws(TraceReadError) -> Fix?
    /// The next fixes, at least one and at most `size` (a reader that parses a chunk at a time
    /// copies them out at once, with no call per fix), or nil at the end of the input.
    mutating func nextBatch(upTo size: Int) throws(TraceReadError) -> [Fix]?
    /// Records skipped so far, by reason.
    var skipped: [String: Int] { get }
}

extension TraceReader {
    /// Up to `size` fixes from ``next()``.
    package mutating func nextBatch(upTo size: Int) throws(TraceReadError) -> [Fix]? {
        var batch: [Fix] = []
        batch.reserveCapacity(size)
        while batch.count < size, let fix = try next() { batch.append(fix) }
        return batch.isEmpty ? nil : batch
    }
}

/// The formats Fencepost reads.
package enum TraceFormat: String, Sendable, CaseIterable {
    case gpx, geojson, csv, takeout, timeline, plt, owntracks, tcx, fit, semantic
}
