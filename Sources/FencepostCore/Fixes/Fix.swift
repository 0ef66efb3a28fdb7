public import FencepostGeometry

/// One location report: a device somewhere at some time.
public struct Fix: Sendable, Hashable {
    public var device: String
    /// Seconds since 1970-01-01T00:00:00Z.
    public var time: Double
    public var lat: Double
    public var lon: Double
    /// Horizontal accuracy in metres (68 % radius), when the source reports it.
    public var accuracy: Double?
    public var altitude: Double?
    /// Metres per second, when the source reports it.
    public var speed: Double?

    public init(
        device: String, time: Double, lat: Double, lon: Double,
        accuracy: Double? = nil, altitude: Double? = nil, speed: Double? = nil
    ) {
        self.device = device
        self.time = time
        self.lat = lat
        self.lon = lon
        self.accuracy = accuracy
        self.altitude = altitude
        self.speed = speed
    }

    public var position: Position { Position(lon: lon, lat: lat) }
}

/// The few facts of a fix that device state keeps between runs.
public struct FixPoint: Sendable, Hashable, Codable {
    public var time: Double
    public var lat: Double
    public var lon: Double
    public var accuracy: Double?

    public init(time: Double, lat: Double, lon: Double, accuracy: Double? = nil) {
        self.time = time
        self.lat = lat
        self.lon = lon
        self.accuracy = accuracy
    }

    public init(_ fix: Fix) {
        self.init(time: fix.time, lat: fix.lat, lon: fix.lon, accuracy: fix.accuracy)
    }

    public var position: Position { Position(lon: lon, lat: lat) }
}
