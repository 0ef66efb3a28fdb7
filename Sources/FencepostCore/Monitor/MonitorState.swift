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

    // Stored in this order, the inside count in a byte: 119 bytes, so a copy is a few moves
    // in line; in the declared order, with an `Int` count, it was 136 and every copy (three
    // each exact step) called memmove, 6 % of a scan's monitoring thread.

    /// The (pending or confirmed) enter.
    public var enter: Crossing
    /// The outward crossing since the last fix inside the region itself: where a confirmed
    /// exit is back-dated to.
    public var outward: Crossing?
    /// On a dense trace (the fix before the first one inside came within
    /// ``MonitorSettings/sparseInterval`` of it): that fix, outside. One fix inside among fixes
    /// seconds apart never confirms an enter alone, however deep, since it may lie; it makes a
    /// visit only when the path from this fix to the next one outside goes through the region
    /// too (a runner across a small circle). Nil on a sparse trace, where a single deep fix a
    /// minute from the others is a visit.
    public var denseFrom: FixPoint?
    private var fixesInside: UInt8
    public var phase: Phase
    /// A fix farther out than the hysteresis band was seen since `outward`.
    public var armed: Bool
    public var dwellEmitted: Bool
    /// The visit's `overstay` (the region's `max_dwell`) was emitted.
    public var overstayEmitted: Bool

    /// Fixes inside the region itself in this visit, counted up to 2: a visit with one is
    /// flagged `single_fix`.
    public var insideFixes: Int {
        get { Int(fixesInside) }
        set { fixesInside = UInt8(clamping: newValue) }
    }

    public init(
        phase: Phase, enter: Crossing, outward: Crossing?, armed: Bool, dwellEmitted: Bool,
        overstayEmitted: Bool = false, denseFrom: FixPoint? = nil, insideFixes: Int = 2
    ) {
        self.enter = enter
        self.outward = outward
        self.denseFrom = denseFrom
        self.fixesInside = UInt8(clamping: insideFixes)
        self.phase = phase
        self.armed = armed
        self.dwellEmitted = dwellEmitted
        self.overstayEmitted = overstayEmitted
    }

    /// One more fix inside the region itself.
    mutating func countFixInside() {
        if insideFixes < 2 { insideFixes += 1 }
    }

    /// Whether a `dwell` or an `overstay` is still to come for this visit under `settings`.
    func awaitsTimedEvent(_ settings: MonitorSettings) -> Bool {
        (settings.dwell != nil && !dwellEmitted) || (settings.maxDwell != nil && !overstayEmitted)
    }
}

extension Membership {
    enum CodingKeys: String, CodingKey {
        case phase, enter, outward, armed, dwellEmitted, overstayEmitted, denseFrom, insideFixes
    }

    /// States saved before `overstayEmitted` existed read as not emitted; before `denseFrom`
    /// and `insideFixes`, as a sparse trace's visit of several fixes (today's rules, no flag).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            phase: try container.decode(Phase.self, forKey: .phase),
            enter: try container.decode(Crossing.self, forKey: .enter),
            outward: try container.decodeIfPresent(Crossing.self, forKey: .outward),
            armed: try container.decode(Bool.self, forKey: .armed),
            dwellEmitted: try container.decode(Bool.self, forKey: .dwellEmitted),
            overstayEmitted: try container.decodeIfPresent(Bool.self, forKey: .overstayEmitted) ?? false,
            denseFrom: try container.decodeIfPresent(FixPoint.self, forKey: .denseFrom),
            insideFixes: try container.decodeIfPresent(Int.self, forKey: .insideFixes) ?? 2)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(phase, forKey: .phase)
        try container.encode(enter, forKey: .enter)
        try container.encodeIfPresent(outward, forKey: .outward)
        try container.encode(armed, forKey: .armed)
        try container.encode(dwellEmitted, forKey: .dwellEmitted)
        try container.encode(overstayEmitted, forKey: .overstayEmitted)
        try container.encodeIfPresent(denseFrom, forKey: .denseFrom)
        try container.encode(insideFixes, forKey: .insideFixes)
    }
}

/// An episode above a region's speed limit in a visit, from its first fast fix. Kept beside the
/// memberships, not in them: a membership is copied at every fix, an episode is rare.
public struct SpeedEpisode: Sendable, Hashable, Codable {
    /// The enter time of the visit it belongs to.
    public var visitEnteredAt: Double
    public var start: Double
    public var position: Position
    /// Metres per second.
    public var maxSpeed: Double
}

/// What the monitor remembers of a device between fixes and between runs.
public struct MonitorState: Sendable, Hashable, Codable {
    /// The previous fix the monitor processed.
    public var lastFix: FixPoint?
    /// Regions the device is in or entering, by region id.
    public var memberships: [String: Membership]
    /// Episodes above a speed limit under way, by region id.
    public var speeding: [String: SpeedEpisode]

    public init(
        lastFix: FixPoint? = nil, memberships: [String: Membership] = [:], speeding: [String: SpeedEpisode] = [:]
    ) {
        self.lastFix = lastFix
        self.memberships = memberships
        self.speeding = speeding
    }

    enum CodingKeys: String, CodingKey {
        case lastFix, memberships, speeding
    }

    /// States saved before `speeding` existed read as having none.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            lastFix: try container.decodeIfPresent(FixPoint.self, forKey: .lastFix),
            memberships: try container.decode([String: Membership].self, forKey: .memberships),
            speeding: try container.decodeIfPresent([String: SpeedEpisode].self, forKey: .speeding) ?? [:])
    }
}

/// A device's monitor state compiled against one monitor's regions, with the caches that speed
/// the monitor up. Made by ``Monitor/track(resuming:)``, turned back into a persistable
/// ``MonitorState`` by ``Monitor/state(of:)``; the caches are never persisted.
public struct MonitorTrack: Sendable {
    /// The previous fix the monitor processed.
    public internal(set) var lastFix: FixPoint?
    /// Memberships in the monitor's regions, by region index.
    var members = MembershipTable()
    /// Memberships in regions this monitor does not watch (disabled or gone since they were
    /// saved): kept as they are.
    var unmonitored: [String: Membership] = [:]
    /// Episodes above a speed limit under way, by region index (``Monitor/processWatchingSpeed``).
    var speeding: [Int: SpeedEpisode] = [:]

    /// The monitor's lookups (``AudienceLookups``) of the regions that apply to the device.
    var lookups: [Int] = []
    /// The monitor's regions that expect the device inside on a schedule and apply to it
    /// (``Monitor/expecting``).
    var expecting: [Int] = []
    /// The box the candidate regions were looked up for; fixes inside it reuse them.
    var box: Envelope?
    /// Regions near the box, ascending by index.
    var candidates: [Int] = []
    /// Per candidate: a disc around the fix the region was last tested exactly at, within which
    /// its boundary is not reached (nil before the first test). While the device's state in the
    /// region is settled (the disc says so) nothing can change inside the disc and no segment
    /// can cross the region; while it is pending, the disc bounds the distance to the boundary.
    var discs: [SafeDisc?] = []
    /// The candidates and discs of the lookup before last, kept for their memory.
    var spareCandidates: [Int] = []
    var spareDiscs: [SafeDisc?] = []
    /// Members that are not among the candidates (rare: the device left their surroundings at
    /// once); followed by id until their membership ends.
    var strays: [Int] = []
    /// A disc inside every candidate's safe disc, valid until the earliest dwell a settled visit
    /// waits for: while fixes stay in it, nothing can happen.
    var quiet: QuietDisc?
    /// Metres per degree of longitude near the last fix, for the discs made around fixes.
    var longitudeScale = LongitudeScale()
    /// While one fix is processed, with layers: per layer, the crossing at which the device's
    /// visit in it ended at this fix, and the regions of a layer the fix is in that waited for
    /// another region of it to let go (``Monitor/layers``).
    var layerReleases: [Int: Crossing] = [:]
    var layerWaiting: [Int] = []
}

/// Metres per degree of longitude, worked out again only when the latitude moves by more than
/// `tolerance` degrees (a cosine per fix was 3 % of the monitor). The scale then errs by at most
/// tan(latitude) × 1.7e-5 of itself, 0.02 % at 85°, well inside the discs' 2 % margin.
struct LongitudeScale: Sendable {
    static let tolerance = 0.001
    private var latitude = Double.nan
    private var scale = 0.0

    mutating func at(latitude: Double) -> Double {
        if !(abs(latitude - self.latitude) <= Self.tolerance) {
            self.latitude = latitude
            scale = Geodesy.metresPerDegreeLongitude(atLatitude: latitude)
        }
        return scale
    }
}

/// Memberships by region index. A device is in a handful of regions at most, so a linear scan
/// beats hashing.
struct MembershipTable: Sendable {
    private(set) var regions: [Int] = []
    private(set) var values: [Membership] = []

    var isEmpty: Bool { regions.isEmpty }

    /// Whether the membership in `region`, if any, still waits for a dwell or an overstay under
    /// `settings`: read where it is, not copied out.
    @inline(__always)
    func awaitsTimedEvent(in region: Int, _ settings: MonitorSettings) -> Bool {
        guard let slot = regions.firstIndex(of: region) else { return false }
        return values[slot].awaitsTimedEvent(settings)
    }

    subscript(region: Int) -> Membership? {
        @inline(__always) get { regions.firstIndex(of: region).map { values[$0] } }
        @inline(__always) set {
            if let slot = regions.firstIndex(of: region) {
                if let newValue {
                    values[slot] = newValue
                } else {
                    regions.remove(at: slot)
                    values.remove(at: slot)
                }
            } else if let newValue {
                regions.append(region)
                values.append(newValue)
            }
        }
    }
}

struct QuietDisc: Sendable {
    let disc: SafeDisc
    /// The earliest time a dwell may fall due.
    let until: Double

    func covers(_ fix: Fix) -> Bool {
        fix.time < until && disc.covers(fix.position)
    }
}

/// A disc around a position the boundary of a region is `boundaryDistance` metres from, short
/// of that boundary: every position in it lies on the same side, and its distance to the
/// boundary is within the disc's `bounds`.
struct SafeDisc: Sendable {
    let center: Position
    let radius: Double
    /// The side of the boundary the disc lies on.
    let inside: Bool
    let metresPerDegreeLon: Double
    /// Metres from the centre to the boundary, as measured (the quiet disc, made from other
    /// discs, has none: 0, and is never asked for bounds).
    let boundaryDistance: Double
    /// Whether the device's state in the region was settled at the last step (plainly outside,
    /// or inside with no pending exit): nothing but a dwell can happen while it stays in the disc.
    var settled: Bool

    init(
        center: Position, radius: Double, inside: Bool, metresPerDegreeLon: Double, boundaryDistance: Double = 0,
        settled: Bool = true
    ) {
        self.center = center
        self.radius = radius
        self.inside = inside
        self.metresPerDegreeLon = metresPerDegreeLon
        self.boundaryDistance = boundaryDistance
        self.settled = settled
    }

    /// The flat-earth distance used to test a disc (`metresPerDegreeLon`: the scale at the
    /// centre's latitude, or the region's own where larger) may be short of the region's own
    /// metric by this factor, plus `flatEarthSlack` metres: on the sphere (circles), up to about
    /// 85° the scale's change across a disc stays within it.
    static let flatEarthFactor = 0.98
    static let flatEarthSlack = 0.05
    /// The largest radius of a disc, in metres.
    static let largestRadius = 5_000.0

    /// The disc that stays short of a boundary `boundaryDistance` metres from `center`, by the
    /// flat-earth margin.
    static func within(
        _ boundaryDistance: Double, of center: Position, inside: Bool, metresPerDegreeLon: Double, settled: Bool = true
    ) -> SafeDisc {
        SafeDisc(
            center: center, radius: min(boundaryDistance * flatEarthFactor - flatEarthSlack, largestRadius),
            inside: inside,
            metresPerDegreeLon: metresPerDegreeLon, boundaryDistance: boundaryDistance, settled: settled)
    }

    /// Whether the segment from `start` to `end` stays nearer to `end` than a boundary
    /// `boundaryDistance` metres from it, by the flat-earth margin (the scale is `end`'s): it
    /// then cannot reach that boundary.
    static func stays(
        within boundaryDistance: Double, from start: Position, to end: Position, metresPerDegreeLon: Double
    ) -> Bool {
        let reach = boundaryDistance * flatEarthFactor - flatEarthSlack
        let dx = (start.lon - end.lon) * metresPerDegreeLon
        let dy = (start.lat - end.lat) * Geodesy.metresPerDegreeLatitude
        return reach > 0 && dx * dx + dy * dy < reach * reach
    }

    /// Whether the segment between two positions outside a region, at least `distances`
    /// metres from it, is too short to go `depth` metres into the region and out again: a
    /// point that deep is farther than its distance plus the depth from either end (by the
    /// flat-earth margin; the scale is `end`'s).
    static func tooShortToEnter(
        from start: Position, to end: Position, distances: (from: Double, to: Double), depth: Double,
        metresPerDegreeLon: Double
    ) -> Bool {
        let reach = (distances.from + distances.to + 2 * depth) * flatEarthFactor - 2 * flatEarthSlack
        let dx = (start.lon - end.lon) * metresPerDegreeLon
        let dy = (start.lat - end.lat) * Geodesy.metresPerDegreeLatitude
        return reach > 0 && dx * dx + dy * dy < reach * reach
    }

    func covers(_ position: Position) -> Bool {
        radius > 0 && distanceSquared(position) < radius * radius
    }

    /// For a position the disc covers, how much farther than it the disc reaches; nil when it
    /// does not cover the position.
    @inline(__always)
    func slackCovering(_ position: Position) -> Double? {
        let flat = distanceSquared(position)
        guard radius > 0, flat < radius * radius else { return nil }
        return radius - flat.squareRoot()
    }

    /// How much farther than `position` the disc reaches (negative outside it).
    func slack(at position: Position) -> Double {
        radius - distanceSquared(position).squareRoot()
    }

    /// For a position in the disc: the least and the most its distance to the boundary can be
    /// (the distance changes by at most the distance moved, measured with the flat-earth margin).
    func bounds(at position: Position) -> (least: Double, most: Double)? {
        let flat = distanceSquared(position)
        guard radius > 0, flat < radius * radius else { return nil }
        let moved = (flat.squareRoot() + Self.flatEarthSlack) / Self.flatEarthFactor
        return (boundaryDistance - moved, boundaryDistance + moved)
    }

    private func distanceSquared(_ position: Position) -> Double {
        let dx = (position.lon - center.lon) * metresPerDegreeLon
        let dy = (position.lat - center.lat) * Geodesy.metresPerDegreeLatitude
        return dx * dx + dy * dy
    }
}
