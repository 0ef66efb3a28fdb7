package import FencepostCore
package import FencepostGeometry
import Foundation

/// One device's movement as a map draws it.
package struct DeviceTrack: Sendable {
    /// Where the line comes from.
    package enum Source: String, Sendable {
        /// The accepted fixes of a trace.
        case fixes
        /// The store keeps no fixes: the line joins the device's boundary crossings in time
        /// order, then its last known position, an outline of where it went between regions.
        case crossings
    }

    package var device: String
    package var source: Source
    /// The line, in time order (thinned to what a map can show; see ``TrackRecorder``).
    package var points: [TrackPoint]
    /// Fixes the filter dropped, with the reason (thinned the same way).
    package var dropped: [DroppedFix]
    /// The device's last known position.
    package var last: TrackPoint?

    package init(
        device: String, source: Source, points: [TrackPoint], dropped: [DroppedFix] = [], last: TrackPoint? = nil
    ) {
        self.device = device
        self.source = source
        self.points = points
        self.dropped = dropped
        self.last = last ?? points.last
    }

    /// The box of the line and the last position. Dropped fixes do not widen the map: a
    /// teleport may be half a world away; those outside the frame are left out.
    var bounds: Envelope? {
        var positions = points.map(\.position)
        if let last { positions.append(last.position) }
        return positions.isEmpty ? nil : Envelope(covering: positions)
    }

    /// The track's position at a time, interpolated between its points; nil outside them.
    func position(at time: Double) -> Position? {
        guard let first = points.first, let final = points.last, time >= first.time, time <= final.time else {
            return nil
        }
        var low = 0
        var high = points.count - 1
        while high - low > 1 {
            let middle = (low + high) / 2
            if points[middle].time <= time { low = middle } else { high = middle }
        }
        let a = points[low]
        let b = points[high]
        let fraction = b.time > a.time ? (time - a.time) / (b.time - a.time) : 0
        return Position(lon: a.lon + (b.lon - a.lon) * fraction, lat: a.lat + (b.lat - a.lat) * fraction)
    }
}

/// A point of a track.
package struct TrackPoint: Sendable, Hashable {
    package var lon: Double
    package var lat: Double
    /// Seconds since the epoch.
    package var time: Double

    package init(lon: Double, lat: Double, time: Double) {
        self.lon = lon
        self.lat = lat
        self.time = time
    }

    package var position: Position { Position(lon: lon, lat: lat) }
}

/// A fix the filter dropped, drawn faintly.
package struct DroppedFix: Sendable, Hashable {
    package var position: Position
    package var time: Double
    package var reason: FixDropReason

    package init(position: Position, time: Double, reason: FixDropReason) {
        self.position = position
        self.time = time
        self.reason = reason
    }
}

/// Collects one device's fixes for a map in bounded memory, whatever the trace's length: once
/// more than `budget` points are kept, the spacing between kept points doubles and the kept
/// ones are thinned to it (a map cannot show two points closer than a pixel anyway). The last
/// fix is always kept. Dropped fixes are thinned by keeping one in every `stride`, which
/// doubles the same way.
package struct TrackRecorder {
    package let device: String
    private let budget: Int
    private let droppedBudget: Int
    private var points: [TrackPoint] = []
    /// Degrees (longitude scaled by the latitude's cosine) two kept points are at least apart.
    private var spacing = 0.0
    private var lastFix: TrackPoint?
    private var dropped: [DroppedFix] = []
    private var droppedStride = 1
    private var droppedSeen = 0

    package init(device: String, budget: Int = 50_000, droppedBudget: Int = 10_000) {
        precondition(budget >= 2 && droppedBudget >= 1, "a track keeps at least two points")
        self.device = device
        self.budget = budget
        self.droppedBudget = droppedBudget
    }

    package mutating func accept(_ fix: Fix) {
        let point = TrackPoint(lon: fix.lon, lat: fix.lat, time: fix.time)
        lastFix = point
        if let previous = points.last, Self.separation(previous, point) < spacing { return }
        points.append(point)
        if points.count > budget { thin() }
    }

    package mutating func drop(_ fix: Fix, reason: FixDropReason) {
        droppedSeen += 1
        // Invalid coordinates cannot be drawn, and (0, 0) is no place the device was.
        guard reason != .invalidCoordinates, reason != .nullIsland, droppedSeen % droppedStride == 0 else { return }
        dropped.append(DroppedFix(position: fix.position, time: fix.time, reason: reason))
        if dropped.count > droppedBudget {
            dropped = dropped.enumerated().filter { $0.offset % 2 == 1 }.map(\.element)
            droppedStride *= 2
        }
    }

    package var track: DeviceTrack {
        var line = points
        if let lastFix, line.last != lastFix { line.append(lastFix) }
        return DeviceTrack(device: device, source: .fixes, points: line, dropped: dropped, last: lastFix)
    }

    private mutating func thin() {
        let extent = Self.separation(points.first!, points.last!)
        spacing = max(spacing, extent / Double(budget), 1e-7)
        while points.count > budget / 2 {
            spacing *= 2
            var kept: [TrackPoint] = [points[0]]
            for point in points.dropFirst() where Self.separation(kept.last!, point) >= spacing {
                kept.append(point)
            }
            points = kept
        }
    }

    private static func separation(_ a: TrackPoint, _ b: TrackPoint) -> Double {
        let dx = (a.lon - b.lon) * cos(a.lat * .pi / 180)
        let dy = a.lat - b.lat
        return (dx * dx + dy * dy).squareRoot()
    }
}
