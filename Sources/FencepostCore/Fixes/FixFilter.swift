import FencepostGeometry

/// Why the filter dropped a fix; counted per reason and reported.
public enum FixDropReason: String, Sendable, Hashable, CaseIterable, Codable {
    case invalidCoordinates = "invalid_coordinates"
    /// A time outside ``FixTimeRange``: before 1970, or a date no recording can carry yet.
    case timeOutOfRange = "time_out_of_range"
    case nullIsland = "null_island"
    case lowAccuracy = "low_accuracy"
    case duplicateTime = "duplicate_time"
    case outOfOrder = "out_of_order"
    case teleport
    case alreadySeen = "already_seen"
    /// A device name that cannot be used (``DeviceID/fileNameProblem(_:)``): no state is kept
    /// for it.
    case badDevice = "bad_device"
}

/// Limits of the fix filter.
public struct FixFilterSettings: Sendable, Hashable {
    /// Fixes with a reported accuracy worse than this many metres are dropped.
    public var maxAccuracy: Double = 200
    /// A fix implying a speed above this (m/s) from the previous accepted fix is a teleport.
    public var maxSpeed: Double = 90
    /// Fixes outside these times are dropped as `time_out_of_range`.
    public var times: FixTimeRange = .files
    public init(maxAccuracy: Double = 200, maxSpeed: Double = 90, times: FixTimeRange = .files) {
        self.maxAccuracy = maxAccuracy
        self.maxSpeed = maxSpeed
        self.times = times
    }
}

/// Decides which fixes reach the monitor. Pure: all it needs is the device's state.
public enum FixFilter {
    /// Nil to accept the fix, else why it is dropped. Updates `state` (the last accepted fix);
    /// `anchorAtStart` is the device's anchor when this input began.
    public static func check(
        _ fix: Fix, state: inout FilterState, anchorAtStart: Double?, settings: FixFilterSettings
    ) -> FixDropReason? {
        guard fix.lat.isFinite, fix.lon.isFinite, (-90...90).contains(fix.lat), (-180...180).contains(fix.lon)
        else { return .invalidCoordinates }
        guard settings.times.contains(fix.time) else { return .timeOutOfRange }
        if fix.lat == 0, fix.lon == 0 { return .nullIsland }
        if let accuracy = fix.accuracy, !(accuracy <= settings.maxAccuracy) { return .lowAccuracy }
        if let anchorAtStart, fix.time <= anchorAtStart { return .alreadySeen }
        if let previous = state.lastAccepted {
            if fix.time == previous.time { return .duplicateTime }
            if fix.time < previous.time { return .outOfOrder }
            if isTeleport(from: previous, to: fix, settings: settings) { return .teleport }
        }
        state.lastAccepted = FixPoint(fix)
        return nil
    }

    /// The implied speed from the previous accepted fix is above `maxSpeed`. After a real long
    /// jump (a flight), fixes are dropped until the average speed since the last accepted fix
    /// falls below it: the design's rule, kept literal.
    static func isTeleport(from previous: FixPoint, to fix: Fix, settings: FixFilterSettings) -> Bool {
        let elapsed = fix.time - previous.time
        guard elapsed > 0 else { return false }
        // The meridian from one latitude to the other, then the parallel (at most as long as
        // the equator's arc): a path no shorter than the great circle, and no trigonometry.
        // Most fixes are well within the speed by it; the rest are measured.
        let bound = (abs(fix.lat - previous.lat) + abs(fix.lon - previous.lon)) * Geodesy.metresPerDegreeLatitude
        if bound <= settings.maxSpeed * elapsed { return false }
        return Geodesy.distance(previous.position, fix.position) / elapsed > settings.maxSpeed
    }
}

/// What the filter remembers of a device: persisted with the rest of its state.
public struct FilterState: Sendable, Hashable, Codable {
    public var lastAccepted: FixPoint?

    public init(lastAccepted: FixPoint? = nil) {
        self.lastAccepted = lastAccepted
    }
}
