/// A stay at one place, found from fixes alone.
public struct Stop: Sendable, Hashable, Codable {
    public var device: String
    /// The first fix at the place (seconds since 1970).
    public var start: Double
    /// The last fix at the place.
    public var end: Double
    /// The place: the mean of the stop's fixes, weighted by their accuracy.
    public var lat: Double
    public var lon: Double
    /// Fixes seen at the stop.
    public var fixes: Int
    /// Whether the device is still there (no departure seen yet).
    public var isOpen: Bool

    public init(
        device: String, start: Double, end: Double, lat: Double, lon: Double, fixes: Int, isOpen: Bool
    ) {
        self.device = device
        self.start = start
        self.end = end
        self.lat = lat
        self.lon = lon
        self.fixes = fixes
        self.isOpen = isOpen
    }

    public var duration: Double { end - start }

    /// A deterministic id: the device and the start to the millisecond, laid out as a visit's
    /// with `stop` where the region goes.
    public var id: String {
        DeterministicID.uuid(device, "stop", Timestamp.format(milliseconds: Timestamp.milliseconds(start)))
    }
}

/// The way between two stops (or from the first fix, or up to a gap).
public struct Trip: Sendable, Hashable, Codable {
    public var device: String
    /// The departure: the last fix at the stop left, or the first fix of the way.
    public var start: Double
    /// The arrival: the first fix at the next stop, or the last fix before a gap.
    public var end: Double
    /// Metres travelled, fix to fix, with jitter and single-fix spikes left out.
    public var distance: Double
    /// The fastest step between two fixes, metres per second.
    public var maxSpeed: Double
    /// Fixes on the way, both ends included.
    public var fixes: Int
    /// The stop left, when the trip began at one.
    public var fromStop: Stop?
    /// The stop reached, when the trip ended at one (nil: it ended at a gap in the trace).
    public var toStop: Stop?
    public var startLat: Double
    public var startLon: Double
    public var endLat: Double
    public var endLon: Double

    public init(
        device: String, start: Double, end: Double, distance: Double, maxSpeed: Double, fixes: Int, fromStop: Stop?,
        toStop: Stop?, startLat: Double, startLon: Double, endLat: Double, endLon: Double
    ) {
        self.device = device
        self.start = start
        self.end = end
        self.distance = distance
        self.maxSpeed = maxSpeed
        self.fixes = fixes
        self.fromStop = fromStop
        self.toStop = toStop
        self.startLat = startLat
        self.startLon = startLon
        self.endLat = endLat
        self.endLon = endLon
    }

    public var duration: Double { end - start }
    /// Metres per second over the whole trip.
    public var meanSpeed: Double { duration > 0 ? distance / duration : 0 }

    public var id: String {
        DeterministicID.uuid(device, "trip", Timestamp.format(milliseconds: Timestamp.milliseconds(start)))
    }
}
