/// The largest values a region's numbers may take. Past them a value is a typo or an attack,
/// not a geofence (a 1e308 m radius passed validation once and crashed the map), and every
/// computation downstream (distances, grids, pictures, times) is only sure to be finite inside
/// them. The same limits bound the command-line options that override them.
public enum RegionLimits {
    /// A bound with its unit, for messages.
    public struct Limit: Sendable {
        public var maximum: Double
        public var unit: String
        /// The maximum as people say it (`1,000 km`).
        public var spoken: String

        /// Why `value` is refused.
        public func refusal(of value: Double) -> String {
            "must be at most \(JSONValue.format(maximum)) \(unit) (\(spoken)), got \(value)"
        }

    }

    /// A circle's radius: a country fits in 1,000 km.
    public static let radius = Limit(maximum: 1_000_000, unit: "m", spoken: "1,000 km")
    /// A corridor's buffer: a corridor 20 km wide is an area.
    public static let buffer = Limit(maximum: 10_000, unit: "m", spoken: "10 km")
    /// `speed_limit_kmh`: faster than an airliner is no road.
    public static let speed = Limit(maximum: 2_000, unit: "km/h", spoken: "2,000 km/h")
    /// The hysteresis band: wider than a city is not noise.
    public static let hysteresis = Limit(maximum: 10_000, unit: "m", spoken: "10 km")
    /// `dwell`: a year (a leap one).
    public static let dwell = Limit(maximum: 31_622_400, unit: "s", spoken: "366 days")
    /// `enter_delay` and `exit_delay`: a day.
    public static let delay = Limit(maximum: 86_400, unit: "s", spoken: "1 day")
}
