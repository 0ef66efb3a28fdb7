/// A health event as the event repository keeps it: a day's step total, a night's sleep, one
/// measurement or one workout, from an Apple Health export.
///
/// The id is deterministic (`me:steps-2023-01-14`, or a kind and a hash of the measurement's
/// dedupe key), so importing the same data again finds the event it made before; a daily total
/// whose properties change is an update of the same event, not a new one.
public struct HealthEvent: Sendable, Hashable {
    public var id: String
    public var kind: HealthEventKind
    /// The person the export belongs to (the event's device).
    public var owner: String
    /// Seconds since the epoch: the start of the day, night, measurement or workout.
    public var time: Double
    /// The values, as a JSON object (kept canonical, so an unchanged event compares equal).
    public var properties: [String: JSONValue]

    public init(id: String, kind: HealthEventKind, owner: String, time: Double, properties: [String: JSONValue]) {
        self.id = id
        self.kind = kind
        self.owner = owner
        self.time = time
        self.properties = properties
    }

    /// An id for a day's (or night's) event of a kind: `me:steps-2023-01-14`.
    public static func dailyID(owner: String, kind: HealthEventKind, date: String) -> String {
        "\(owner):\(kind.rawValue)-\(date)"
    }

    /// An id for one measurement or workout, from its dedupe key (type, source, start, end, value).
    public static func measurementID(owner: String, kind: HealthEventKind, key: [String]) -> String {
        "\(owner):\(kind.rawValue)-\(DeterministicID.uuid(parts: [owner, kind.rawValue] + key))"
    }
}

/// The kinds of health event, as the events table's `kind` column, ids and payloads name them:
/// a daily total, a night, a measurement or a workout.
public enum HealthEventKind: String, Sendable, Hashable, CaseIterable {
    case steps
    case distance
    case activeEnergy = "active_energy"
    case water
    case sleep
    case bodyMass = "body_mass"
    case bmi
    case bloodPressure = "blood_pressure"
    case heartRate = "heart_rate"
    /// One workout (the kind an import selects is `workouts`, plural).
    case workout
}
