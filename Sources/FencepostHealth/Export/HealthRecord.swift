package import FencepostCore

/// One `<Record>` of an export: a sample of some HealthKit type from some source.
package struct HealthRecord: Sendable, Hashable {
    /// The HealthKit identifier, `HKQuantityTypeIdentifierStepCount`.
    package var type: String
    package var source: String
    package var unit: String?
    /// The value as written: a number for quantities, a category name for categories.
    package var value: String?
    package var start: HealthDate
    package var end: HealthDate
    /// When the sample was saved to HealthKit (what anchors follow); nil in some old exports.
    package var creation: HealthDate?

    /// The dedupe key of the design: type, source, start, end and value.
    package var dedupeKey: [String] {
        [type, source, "\(start.seconds)", "\(end.seconds)", value ?? ""]
    }
}

/// A `<Correlation>` (blood pressure, food): the records it groups. The export repeats them at
/// top level, so they are counted there once and read here only as the correlation's parts.
package struct HealthCorrelation: Sendable, Hashable {
    package var type: String
    package var source: String
    package var start: HealthDate
    package var end: HealthDate
    package var creation: HealthDate?
    package var records: [HealthRecord]
}

/// A `<Workout>` with its statistics and route.
package struct HealthWorkout: Sendable, Hashable {
    /// `HKWorkoutActivityTypeRunning`.
    package var activityType: String
    package var source: String
    package var start: HealthDate
    package var end: HealthDate
    package var creation: HealthDate?
    /// Seconds.
    package var duration: Double?
    package var distanceMetres: Double?
    package var energyKilocalories: Double?
    /// The `HKTimeZone` metadata entry, when present.
    package var timeZone: String?
    package var eventCount = 0
    package var route: HealthRoute?
}

/// Where a workout's route is: a GPX file beside the export, or the older inline `<Location>`s.
package struct HealthRoute: Sendable, Hashable {
    package enum Points: Sendable, Hashable {
        /// The `FileReference` path, `/workout-routes/route_2019-06-11_3.00pm.gpx`.
        case file(String)
        case inline([Fix])
    }

    /// The route's own source (the device that recorded it).
    package var source: String
    package var points: Points
}

/// What an export holds, item by item, in document order.
package enum HealthItem: Sendable, Hashable {
    case record(HealthRecord)
    case correlation(HealthCorrelation)
    case workout(HealthWorkout)
    case activitySummary(date: String)
    /// A top-level element of a kind not imported (`ClinicalRecord`, `Audiogram`…).
    case other(String)
}
