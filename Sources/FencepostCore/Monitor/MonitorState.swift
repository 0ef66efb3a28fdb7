public import FencepostGeometry

/// A time on the boundary, with how it was found and where (when known).
public struct Crossing: Sendable, Hashable, Codable {
    public var time: Double
    public var flags: EventFlags
    /// The crossing point: interpolated on the segment, or the fix's own position across a gap.
    public var position: Position?

    public init(time: Double, flags: EventFlags, position: Position? = nil) {
        self.time = time
        self.flags = flags
        self.position = position
    }
}

/// A device's relation to one region, while it is not plainly outside.
public struct Membership: Sendable, Hashable, Codable {
    public enum Phase: String, Sendable, Codable {
        /// Inside, waiting for `enter_delay` to confirm the enter.
        case entering
        /// A confirmed, open visit.
        case inside
    }

    public var phase: Phase
    /// The (pending or confirmed) enter.
    public var enter: Crossing
    /// The outward crossing since the last fix inside the region itself: where a confirmed
    /// exit is back-dated to.
    public var outward: Crossing?
    /// A fix farther out than the hysteresis band was seen since `outward`.
    public var armed: Bool
    public var dwellEmitted: Bool
}

/// What the monitor remembers of a device between fixes and between runs.
public struct MonitorState: Sendable, Hashable, Codable {
    /// The previous fix the monitor processed.
    public var lastFix: FixPoint?
    /// Regions the device is in or entering, by region id.
    public var memberships: [String: Membership]

    public init(lastFix: FixPoint? = nil, memberships: [String: Membership] = [:]) {
        self.lastFix = lastFix
        self.memberships = memberships
    }
}

/// Per-device caches that speed the monitor up; never persisted, always safe to drop.
public struct MonitorCache: Sendable {
    /// The box the candidate regions were looked up for; fixes inside it reuse them.
    var box: Envelope?
    var candidates: [Int] = []
    /// Per candidate: a disc around a fix within which the region's boundary is not reached,
    /// so membership cannot change and no segment can cross it.
    var discs: [SafeDisc?] = []
    /// Per candidate: whether the device has a membership in it (so most fixes need no lookup
    /// by region id to find the regions to follow).
    var memberFlags: [Bool] = []

    public init() {}
}

struct SafeDisc: Sendable {
    let center: Position
    let radius: Double
    let inside: Bool
    let metresPerDegreeLon: Double

    init(center: Position, radius: Double, inside: Bool) {
        self.center = center
        // Margin for the flat-earth distance used to test it.
        self.radius = min(radius * 0.98 - 0.05, 5_000)
        self.inside = inside
        self.metresPerDegreeLon = Geodesy.metresPerDegreeLongitude(atLatitude: center.lat)
    }

    func covers(_ position: Position) -> Bool {
        guard radius > 0 else { return false }
        let dx = (position.lon - center.lon) * metresPerDegreeLon
        let dy = (position.lat - center.lat) * Geodesy.metresPerDegreeLatitude
        return dx * dx + dy * dy < radius * radius
    }
}
