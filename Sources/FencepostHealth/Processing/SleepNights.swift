import FencepostCore

/// Sleep samples of every source merged into one event per night.
///
/// Samples less than three hours apart belong to the same night, named by the local date it ends
/// on (`sleep-2023-01-15` is the night from the 14th to the 15th). Overlapping samples of several
/// sources (the Watch's stages, another app's in-bed and asleep spans) count once: each figure is
/// the length of a union of spans, asleep time excludes time marked awake, and time in bed covers
/// every sample.
struct SleepNights {
    private struct Sample {
        var interval: Interval
        var end: HealthDate
        var stage: Stage
        var source: String
        var isNew: Bool
    }

    enum Stage: String, CaseIterable {
        case inBed = "in_bed"
        case awake, core, deep, rem, unspecified

        init(category: String) {
            switch category {
            case "HKCategoryValueSleepAnalysisInBed": self = .inBed
            case "HKCategoryValueSleepAnalysisAwake": self = .awake
            case "HKCategoryValueSleepAnalysisAsleepCore": self = .core
            case "HKCategoryValueSleepAnalysisAsleepDeep": self = .deep
            case "HKCategoryValueSleepAnalysisAsleepREM": self = .rem
            default: self = .unspecified  // Asleep, AsleepUnspecified and older values
            }
        }

        var isAsleep: Bool { ![.inBed, .awake].contains(self) }
    }

    private var samples: [Sample] = []
    static let nightGap = 3.0 * 3600

    mutating func add(_ record: HealthRecord, isNew: Bool) {
        samples.append(
            Sample(
                interval: Interval(start: record.start.seconds, end: max(record.end.seconds, record.start.seconds)),
                end: record.end, stage: Stage(category: record.value ?? ""), source: record.source, isNew: isNew))
    }

    /// Events for the nights holding a new sample or ending on one of `days` (every night when
    /// `days` is nil).
    func events(owner: String, days: Set<Int>?) -> [HealthEvent] {
        var nights: [Int: [Sample]] = [:]
        var cluster: [Sample] = []
        func close() {
            guard let last = cluster.max(by: { $0.interval.end < $1.interval.end }) else { return }
            nights[last.end.localDay, default: []] += cluster
            cluster = []
        }
        for sample in samples.sorted(by: { $0.interval.start < $1.interval.start }) {
            if let reach = cluster.map(\.interval.end).max(), sample.interval.start > reach + Self.nightGap { close() }
            cluster.append(sample)
        }
        close()
        return nights.keys.sorted().compactMap { day in
            let night = nights[day]!
            guard days == nil || days!.contains(day) || night.contains(where: \.isNew) else { return nil }
            return event(owner: owner, day: day, night)
        }
    }

    private func event(owner: String, day: Int, _ night: [Sample]) -> HealthEvent {
        func union(_ stages: Set<Stage>) -> IntervalSet {
            IntervalSet(night.filter { stages.contains($0.stage) }.map(\.interval))
        }
        let awake = union([.awake])
        let asleep = union(Set(Stage.allCases.filter(\.isAsleep))).subtracting(awake)
        let inBed = IntervalSet(night.map(\.interval))
        var properties: [String: JSONValue] = [
            "date": .string(HealthDate.dateText(day: day)),
            "start": .string(Timestamp.format(seconds: inBed.spans.first?.start ?? 0)),
            "end": .string(Timestamp.format(seconds: inBed.spans.last?.end ?? 0)),
            "in_bed_minutes": .number(Self.minutes(inBed.length)),
            "asleep_minutes": .number(Self.minutes(asleep.length)),
            "awake_minutes": .number(Self.minutes(awake.length)),
            "sources": .array(Set(night.map(\.source)).sorted().map(JSONValue.string)),
            "samples": .number(Double(night.count)),
        ]
        for stage in [Stage.core, .deep, .rem, .unspecified] {
            properties["\(stage.rawValue)_minutes"] = .number(Self.minutes(union([stage]).subtracting(awake).length))
        }
        return HealthEvent(
            id: HealthEvent.dailyID(owner: owner, kind: .sleep, date: HealthDate.dateText(day: day)),
            kind: .sleep, owner: owner, time: inBed.spans.first?.start ?? 0, properties: properties)
    }

    private static func minutes(_ seconds: Double) -> Double {
        (seconds / 6).rounded() / 10
    }
}
