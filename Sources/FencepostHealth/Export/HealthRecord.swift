public import FencepostCore

/// One `<Record>` of an export: a sample of some HealthKit type from some source.
public struct HealthRecord: Sendable, Hashable {
    /// The HealthKit identifier, `HKQuantityTypeIdentifierStepCount`.
    public var type: String
    public var source: String
    public var unit: String?
    /// The value as written: a number for quantities, a category name for categories.
    public var value: String?
    public var start: HealthDate
    public var end: HealthDate
    /// When the sample was saved to HealthKit (what anchors follow); nil in some old exports.
    public var creation: HealthDate?

    /// The dedupe key of the design: type, source, start, end and value.
    public var dedupeKey: [String] {
        [type, source, "\(start.seconds)", "\(end.seconds)", value ?? ""]
    }
}

/// A `<Correlation>` (blood pressure, food): the records it groups. The export repeats them at
/// top level, so they are counted there once and read here only as the correlation's parts.
public struct HealthCorrelation: Sendable, Hashable {
    public var type: String
    public var source: String
    public var start: HealthDate
    public var end: HealthDate
    public var creation: HealthDate?
    public var records: [HealthRecord]
}

/// A `<Workout>` with its statistics and route.
public struct HealthWorkout: Sendable, Hashable {
    /// `HKWorkoutActivityTypeRunning`.
    public var activityType: String
    public var source: String
    public var start: HealthDate
    public var end: HealthDate
    public var creation: HealthDate?
    /// Seconds.
    public var duration: Double?
    public var distanceMetres: Double?
    public var energyKilocalories: Double?
    /// The `HKTimeZone` metadata entry, when present.
    public var timeZone: String?
    public var eventCount = 0
    public var route: HealthRoute?
}

/// Where a workout's route is: a GPX file beside the export, or the older inline `<Location>`s.
public struct HealthRoute: Sendable, Hashable {
    public enum Points: Sendable, Hashable {
        /// The `FileReference` path, `/workout-routes/route_2019-06-11_3.00pm.gpx`.
        case file(String)
        case inline([Fix])
    }

    /// The route's own source (the device that recorded it).
    public var source: String
    public var points: Points
}

/// What an export holds, item by item, in document order.
public enum HealthItem: Sendable, Hashable {
    case record(HealthRecord)
    case correlation(HealthCorrelation)
    case workout(HealthWorkout)
    case activitySummary(date: String)
    /// A top-level element of a kind not imported (`ClinicalRecord`, `Audiogram`…).
    case other(String)
}
