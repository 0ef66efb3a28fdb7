package import FencepostCore

/// What an import makes of each HealthKit type, by the kind of event it becomes: a daily total,
/// sleep nights, one event per measurement or workout. One list of kinds (``HealthEventKind``)
/// serves the events and the import's selection (`--types`), whose name for workouts is plural.
extension HealthEventKind {
    /// The kind's name in `--types`, the import's anchors and its summaries: the raw value,
    /// but `workouts` for workouts (an import selects workouts; each event is one workout).
    package var selectionName: String { self == .workout ? "workouts" : rawValue }

    /// The kind `--types` names `name`.
    package init?(selectionName name: String) {
        guard let kind = Self.allCases.first(where: { $0.selectionName == name }) else { return nil }
        self = kind
    }

    /// The kinds summed per local day, with their source-priority merge.
    var isDailyTotal: Bool { [.steps, .distance, .activeEnergy, .water].contains(self) }

    /// The unit the events carry.
    var unit: String {
        switch self {
        case .steps: "count"
        case .distance: "m"
        case .activeEnergy: "kcal"
        case .water: "mL"
        case .sleep: "min"
        case .bodyMass: "kg"
        case .bmi: "count"
        case .bloodPressure: "mmHg"
        case .heartRate: "count/min"
        case .workout: "s"
        }
    }

    /// The kind a record type feeds, and the metric name for heart-rate summaries.
    static func of(recordType type: String) -> (kind: HealthEventKind, metric: String?)? {
        switch type {
        case "HKQuantityTypeIdentifierStepCount": (.steps, nil)
        case "HKQuantityTypeIdentifierDistanceWalkingRunning": (.distance, nil)
        case "HKQuantityTypeIdentifierActiveEnergyBurned": (.activeEnergy, nil)
        case "HKQuantityTypeIdentifierDietaryWater": (.water, nil)
        case "HKCategoryTypeIdentifierSleepAnalysis": (.sleep, nil)
        case "HKQuantityTypeIdentifierBodyMass": (.bodyMass, nil)
        case "HKQuantityTypeIdentifierBodyMassIndex": (.bmi, nil)
        case "HKQuantityTypeIdentifierRestingHeartRate": (.heartRate, "resting")
        case "HKQuantityTypeIdentifierWalkingHeartRateAverage": (.heartRate, "walking_average")
        case "HKQuantityTypeIdentifierHeartRateVariabilitySDNN": (.heartRate, "variability_sdnn")
        default: nil
        }
    }

    /// The record's value in this kind's unit; nil when it is not a number or the unit is unknown.
    func value(of record: HealthRecord) -> Double? {
        switch self {
        case .steps, .bmi, .bloodPressure: record.value.flatMap(Double.init)
        case .distance: HealthUnits.metres(record.value, unit: record.unit)
        case .activeEnergy: HealthUnits.kilocalories(record.value, unit: record.unit)
        case .water: HealthUnits.millilitres(record.value, unit: record.unit)
        case .bodyMass: HealthUnits.kilograms(record.value, unit: record.unit)
        case .heartRate: record.value.flatMap(Double.init)
        case .sleep, .workout: nil
        }
    }
}

/// Unit conversions for the units Apple Health writes.
enum HealthUnits {
    static func metres(_ value: String?, unit: String?) -> Double? {
        scaled(value, unit, ["m": 1, "km": 1000, "cm": 0.01, "mi": 1609.344, "ft": 0.3048, "yd": 0.9144])
    }

    static func kilocalories(_ value: String?, unit: String?) -> Double? {
        scaled(value, unit, ["kcal": 1, "Cal": 1, "cal": 0.001, "kJ": 1 / 4.184, "J": 1 / 4184])
    }

    static func millilitres(_ value: String?, unit: String?) -> Double? {
        scaled(
            value, unit, ["mL": 1, "L": 1000, "dL": 100, "fl_oz_us": 29.5735, "fl_oz_imp": 28.4131, "cup_us": 236.588])
    }

    static func kilograms(_ value: String?, unit: String?) -> Double? {
        scaled(value, unit, ["kg": 1, "g": 0.001, "lb": 0.45359237, "st": 6.35029318])
    }

    static func seconds(_ value: String?, unit: String?) -> Double? {
        scaled(value, unit, ["s": 1, "min": 60, "hr": 3600, "h": 3600, "d": 86_400])
    }

    private static func scaled(_ value: String?, _ unit: String?, _ factors: [String: Double]) -> Double? {
        guard let value, let number = Double(value), number.isFinite, let factor = factors[unit ?? ""] else {
            return nil
        }
        return number * factor
    }
}
