public import FencepostGeometry

/// A geofence: what region configs declare and the store monitors.
public struct Region: Sendable, Hashable {
    /// Unique across the whole region set; `[A-Za-z0-9._:-]+`.
    public var id: String
    public var name: String?
    public var tags: [String]
    public var shape: RegionShape
    public var settings: RegionSettings
    /// The devices it applies to (every device by default).
    public var audience: RegionAudience
    /// Properties Fencepost does not interpret, kept as given.
    public var extraProperties: [String: JSONValue]

    public init(
        id: String, name: String? = nil, tags: [String] = [], shape: RegionShape,
        settings: RegionSettings = RegionSettings(), audience: RegionAudience = .everyone,
        extraProperties: [String: JSONValue] = [:]
    ) {
        self.id = id
        self.name = name
        self.tags = tags
        self.shape = shape
        self.settings = settings
        self.audience = audience
        self.extraProperties = extraProperties
    }
}

/// The area a region covers.
public enum RegionShape: Sendable, Hashable {
    /// A circle: points within `radius` metres (haversine) of `center`.
    case circle(center: Position, radius: Double)
    /// A polygon or multipolygon, holes allowed; planar in lon/lat, boundary inside.
    case area(Shape)
    /// Points within a buffer of a line (a route, a pipeline).
    case corridor(Corridor)

    /// The geometry as GeoJSON carries it: a Point for a circle, a LineString for a corridor.
    public var geometry: Shape {
        switch self {
        case .circle(let center, _): return .point(center)
        case .area(let shape): return shape
        case .corridor(let corridor): return .lineString(corridor.line)
        }
    }

    /// A short name of the kind of shape: `circle`, `polygon`, `multipolygon` or `corridor`.
    public var kind: String {
        switch self {
        case .circle: return "circle"
        case .area(.multiPolygon): return "multipolygon"
        case .area: return "polygon"
        case .corridor: return "corridor"
        }
    }

    /// The polygon a region other than a circle covers: its own, or a corridor's outline.
    public var polygonal: Shape? {
        switch self {
        case .circle: return nil
        case .area(let shape): return shape
        case .corridor(let corridor): return corridor.outline
        }
    }

    /// The lon/lat box the region covers (for a circle, the box around it).
    public var bounds: Envelope {
        switch self {
        case .circle(let center, let radius):
            let dLat = radius / Geodesy.metresPerDegreeLatitude
            let dLon = radius / max(Geodesy.metresPerDegreeLongitude(atLatitude: center.lat), 1e-9)
            let box = Envelope(covering: [center]).expanded(dx: dLon, dy: dLat)
            // A circle over a pole or across the antimeridian spans every longitude, as far as a
            // box in lon/lat can say (candidates are then decided by the exact distance).
            let wraps = box.minY <= -90 || box.maxY >= 90 || box.minX < -180 || box.maxX > 180
            return Envelope(
                minX: wraps ? -180 : box.minX, minY: max(box.minY, -90), maxX: wraps ? 180 : box.maxX,
                maxY: min(box.maxY, 90))
        case .area(let shape):
            return shape.bounds
        case .corridor(let corridor):
            return corridor.outline.bounds
        }
    }
}

/// Per-region monitoring settings; nil means "use the run's default".
public struct RegionSettings: Sendable, Hashable {
    /// Metres a fix must be outside the region before an inside state turns outside.
    public var hysteresis: Double?
    /// Seconds after entering at which a `dwell` event fires; off when nil.
    public var dwell: Double?
    /// Seconds after entering at which a visit still open is an `overstay`; off when nil.
    public var maxDwell: Double?
    /// Seconds the inside state must hold before an enter is confirmed.
    public var enterDelay: Double?
    /// Seconds the outside state must hold before an exit is confirmed.
    public var exitDelay: Double?
    /// A disabled region is stored but not monitored.
    public var enabled: Bool
    /// When the region is active; always when nil.
    public var schedule: RegionSchedule?
    /// `expect: "inside"`: the device should be inside while the region is active, and an
    /// `absent` event says when it is not.
    public var expectsInside = false
    /// `speed_limit_kmh`: inside the region, faster than this for `speedMinDuration` is an
    /// `overspeed`; off when nil.
    public var speedLimit: Double?
    /// `speed_min_duration` (seconds): how long an episode must last to count; 10 s when nil.
    public var speedMinDuration: Double?
    /// `layer`: regions of one layer partition space (communes, districts, delivery zones): a
    /// device is in at most one of them at a time, and moving to a neighbour closes one visit
    /// and opens the other at the same crossing, once the hysteresis of the one it leaves is
    /// passed. Nil: the region stands alone.
    public var layer: String?
    /// `privacy: true`: the region's events are kept, but no fix inside it is stored in the
    /// history (``Monitor/isPrivate(_:)``).
    public var privacy = false

    public init(
        hysteresis: Double? = nil, dwell: Double? = nil, enterDelay: Double? = nil,
        exitDelay: Double? = nil, enabled: Bool = true, maxDwell: Double? = nil, schedule: RegionSchedule? = nil,
        expectsInside: Bool = false, speedLimit: Double? = nil, speedMinDuration: Double? = nil
    ) {
        self.speedLimit = speedLimit
        self.speedMinDuration = speedMinDuration
        self.schedule = schedule
        self.expectsInside = expectsInside
        self.maxDwell = maxDwell
        self.hysteresis = hysteresis
        self.dwell = dwell
        self.enterDelay = enterDelay
        self.exitDelay = exitDelay
        self.enabled = enabled
    }
}
