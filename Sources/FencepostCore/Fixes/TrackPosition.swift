public import FencepostGeometry

/// Where a device was at a time, from the stored fixes around it (`fencepost where`): the fix
/// at that time, or the position interpolated between the fixes before and after it (linearly
/// in time, along the straight line between them), unless they are more than `maxGap` apart
/// or the time lies outside the stored track.
public enum TrackPosition: Sendable, Equatable {
    /// A fix at exactly that time.
    case exact(Fix)
    /// Between two fixes: `fraction` (0...1) of the way from `before` to `after`.
    case interpolated(Position, before: Fix, after: Fix, fraction: Double)
    /// Between two fixes more than the allowed gap apart: nothing to say in between.
    case gap(before: Fix, after: Fix)
    /// Before the first stored fix, or after the last (the nearest given).
    case beforeFirst(Fix)
    case afterLast(Fix)
    /// Nothing stored for the device.
    case unknown

    /// The position at `time` from the last fix at or before it and the first at or after it.
    public static func at(_ time: Double, before: Fix?, after: Fix?, maxGap: Double) -> TrackPosition {
        switch (before, after) {
        case (nil, nil):
            return .unknown
        case (nil, let after?):
            return after.time == time ? .exact(after) : .beforeFirst(after)
        case (let before?, nil):
            return before.time == time ? .exact(before) : .afterLast(before)
        case (let before?, let after?):
            if before.time == time { return .exact(before) }
            if after.time == time { return .exact(after) }
            let span = after.time - before.time
            guard span <= maxGap, span > 0 else { return .gap(before: before, after: after) }
            let fraction = (time - before.time) / span
            var dLon = after.lon - before.lon
            // The short way round across the antimeridian.
            if dLon > 180 { dLon -= 360 } else if dLon < -180 { dLon += 360 }
            var lon = before.lon + dLon * fraction
            if lon > 180 { lon -= 360 } else if lon < -180 { lon += 360 }
            let position = Position(lon: lon, lat: before.lat + (after.lat - before.lat) * fraction)
            return .interpolated(position, before: before, after: after, fraction: fraction)
        }
    }
}
