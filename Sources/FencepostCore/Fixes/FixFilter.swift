import FencepostGeometry

/// Why the filter dropped a fix; counted per reason and reported.
public enum FixDropReason: String, Sendable, Hashable, CaseIterable, Codable {
    case invalidCoordinates = "invalid_coordinates"
    case nullIsland = "null_island"
    case lowAccuracy = "low_accuracy"
    case duplicateTime = "duplicate_time"
    case outOfOrder = "out_of_order"
    case teleport
    case alreadySeen = "already_seen"
}

/// Limits of the fix filter.
public struct FixFilterSettings: Sendable, Hashable {
    /// Fixes with a reported accuracy worse than this many metres are dropped.
    public var maxAccuracy: Double = 200
    /// A fix implying a speed above this (m/s) from the previous accepted fix is a teleport.
    public var maxSpeed: Double = 90
    /// Beyond this many seconds since the previous fix, any distance is plausible (a flight).
    public var maxGap: Double = 900

    public init(maxAccuracy: Double = 200, maxSpeed: Double = 90, maxGap: Double = 900) {
        self.maxAccuracy = maxAccuracy
        self.maxSpeed = maxSpeed
        self.maxGap = maxGap
    }
}

/// Decides which fixes reach the monitor. Pure: all it needs is the device's state.
public enum FixFilter {
    /// Nil to accept the fix, else why it is dropped. Updates `state` (last accepted fix,
    /// teleport recovery); `anchorAtStart` is the device's anchor when this input began.
    public static func check(
        _ fix: Fix, state: inout FilterState, anchorAtStart: Double?, settings: FixFilterSettings
    ) -> FixDropReason? {
        guard fix.lat.isFinite, fix.lon.isFinite, fix.time.isFinite,
            (-90...90).contains(fix.lat), (-180...180).contains(fix.lon)
        else { return .invalidCoordinates }
        if fix.lat == 0, fix.lon == 0 { return .nullIsland }
        if let accuracy = fix.accuracy, !(accuracy <= settings.maxAccuracy) { return .lowAccuracy }
        if let anchorAtStart, fix.time <= anchorAtStart { return .alreadySeen }
        if let previous = state.lastAccepted {
            if fix.time == previous.time { return .duplicateTime }
            if fix.time < previous.time { return .outOfOrder }
            if isTeleport(from: previous, to: fix, settings: settings) {
                // Two consecutive fixes that agree with each other but not with the last accepted
                // one mean the device really moved (or the accepted one was the outlier).
                if let rejected = state.lastRejected, fix.time > rejected.time,
                    !isTeleport(from: rejected, to: fix, settings: settings)
                {
                    state.lastRejected = nil
                } else {
                    state.lastRejected = FixPoint(fix)
                    return .teleport
                }
            }
        }
        state.lastAccepted = FixPoint(fix)
        state.lastRejected = nil
        return nil
    }

    static func isTeleport(from previous: FixPoint, to fix: Fix, settings: FixFilterSettings) -> Bool {
        let elapsed = fix.time - previous.time
        guard elapsed > 0, elapsed <= settings.maxGap else { return false }
        return Geodesy.distance(previous.position, fix.position) / elapsed > settings.maxSpeed
    }
}

/// What the filter remembers of a device: persisted with the rest of its state.
public struct FilterState: Sendable, Hashable, Codable {
    public var lastAccepted: FixPoint?
    public var lastRejected: FixPoint?

    public init(lastAccepted: FixPoint? = nil, lastRejected: FixPoint? = nil) {
        self.lastAccepted = lastAccepted
        self.lastRejected = lastRejected
    }
}
