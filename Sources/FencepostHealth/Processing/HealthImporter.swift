package import FencepostCore
package import FencepostFormats
import Foundation

/// What an import is asked to do.
package struct HealthImportOptions: Sendable {
    /// Whose export it is: the device of its events.
    package var owner: String
    /// Records starting before this instant are left out.
    package var since: Double?
    package var kinds: Set<HealthEventKind>
    package var priority: SourcePriority

    package init(
        owner: String = "me", since: Double? = nil, kinds: Set<HealthEventKind> = Set(HealthEventKind.allCases),
        priority: SourcePriority = .standard
    ) {
        self.owner = owner
        self.since = since
        self.kinds = kinds
        self.priority = priority
    }
}

/// Counts of what the reader saw.
package struct HealthReadSummary: Sendable, Hashable {
    package var records = 0
    package var correlations = 0
    package var workouts = 0
    package var activitySummaries = 0
    /// Records (and other items) not made into events, by reason.
    package var skipped: [String: Int] = [:]
    /// Records newer than their kind's anchor, by kind.
    package var new: [HealthEventKind: Int] = [:]
}

/// A workout's route, to be fed to the monitor as a trace.
package struct WorkoutRouteInput: Sendable, Hashable {
    package var workoutID: String
    package var route: HealthRoute
}

/// The outcome of reading an export: events to write (new, or recomputed for the days that
/// changed), each kind's new anchor, the sources seen and the routes to ingest.
package struct HealthImportPlan: Sendable {
    package var events: [HealthEvent] = []
    /// Per kind: the latest creation time among its records (what the next import compares).
    package var anchors: [String: Double] = [:]
    /// Records per source, over the whole export.
    package var sources: [String: Int] = [:]
    package var routes: [WorkoutRouteInput] = []
    package var summary = HealthReadSummary()
}

/// Turns an Apple Health export into health events, incrementally: each kind has an anchor (the
/// newest creation time it has imported); only records created after it are new. Measurements
/// and workouts are written when new; daily totals and nights are recomputed for every local day
/// a new record touches, from all of that day's records, so a newer export updates them.
package struct HealthImporter {
    package let options: HealthImportOptions
    /// Per kind (raw value): the anchor of the last import.
    package let anchors: [String: Double]

    package init(options: HealthImportOptions, anchors: [String: Double]) {
        self.options = options
        self.anchors = anchors
    }

    /// Reads the whole export (streaming) and plans what to write; `progress` hears the count
    /// of items read now and then.
    package func plan(
        reading reader: inout HealthExportReader, progress: (_ items: Int) -> Void = { _ in }
    ) throws(TraceReadError) -> HealthImportPlan {
        var work = Work(options: options, anchors: anchors)
        var count = 0
        while let item = try reader.next() {
            work.take(item)
            count += 1
            if count & 0x3FFF == 0 { progress(count) }
        }
        return work.finish()
    }

    /// The state of one pass over an export.
    private struct Work {
        let options: HealthImportOptions
        let anchors: [String: Double]
        var plan = HealthImportPlan()
        var sourceNames: [String] = []
        var sourceIndex: [String: Int32] = [:]
        /// Per source: the time spans its records cover (who was present when), apart from step
        /// and distance samples, which span whole chunks of activity and so claim minutes the
        /// device was not worn (the Watch's per-minute energy samples say it better).
        var presence: [Int32: [Interval]] = [:]
        /// Per source: the spans of its step and distance samples, for sources with nothing else.
        var chunkPresence: [Int32: [Interval]] = [:]
        var totals: [HealthEventKind: DailyTotals] = [:]
        var sleep = SleepNights()
        /// Local days (since 1970) touched by a new record of an imported kind.
        var affectedDays: Set<Int> = []

        init(options: HealthImportOptions, anchors: [String: Double]) {
            self.options = options
            self.anchors = anchors
        }

        mutating func take(_ item: HealthItem) {
            switch item {
            case .record(let record):
                plan.summary.records += 1
                take(record)
            case .correlation(let correlation):
                plan.summary.correlations += 1
                take(correlation)
            case .workout(let workout):
                plan.summary.workouts += 1
                take(workout)
            case .activitySummary:
                plan.summary.activitySummaries += 1
                skip("activity summary (not imported)")
            case .other(let name):
                skip("<\(name)> (not imported)")
            }
        }

        private mutating func skip(_ reason: String) {
            plan.summary.skipped[reason, default: 0] += 1
        }

        private mutating func source(_ name: String) -> Int32 {
            if let index = sourceIndex[name] { return index }
            let index = Int32(sourceNames.count)
            sourceNames.append(name)
            sourceIndex[name] = index
            return index
        }

        /// Whether a record of `kind` is newer than the kind's anchor; advances the anchor.
        private mutating func isNew(_ kind: HealthEventKind, created: HealthDate?, end: HealthDate) -> Bool {
            let stamp = (created ?? end).seconds
            plan.anchors[kind.selectionName] = max(plan.anchors[kind.selectionName] ?? stamp, stamp)
            guard stamp > anchors[kind.selectionName] ?? -.infinity else { return false }
            plan.summary.new[kind, default: 0] += 1
            return true
        }

        private mutating func take(_ record: HealthRecord) {
            let source = source(record.source)
            plan.sources[record.source, default: 0] += 1
            let mapped = HealthEventKind.of(recordType: record.type)
            if record.end.seconds > record.start.seconds {
                let span = Interval(start: record.start.seconds, end: record.end.seconds)
                if mapped?.kind == .steps || mapped?.kind == .distance {
                    chunkPresence[source, default: []].append(span)
                } else {
                    presence[source, default: []].append(span)
                }
            }
            if record.type.hasPrefix("HKQuantityTypeIdentifierBloodPressure") {
                return skip("blood pressure part (counted in its correlation)")
            }
            guard let (kind, metric) = mapped else { return skip("type not imported") }
            guard options.kinds.contains(kind) else { return skip("kind not selected") }
            if let since = options.since, record.start.seconds < since { return skip("before --since") }
            let new = isNew(kind, created: record.creation, end: record.end)
            if kind == .sleep {
                sleep.add(record, isNew: new)
                if new { affectedDays.insert(record.end.localDay) }
                return
            }
            guard let value = kind.value(of: record) else { return skip("value not a number, or unknown unit") }
            if kind.isDailyTotal {
                totals[kind, default: DailyTotals(kind: kind)].add(record, value: value, source: source)
                if new {
                    affectedDays.insert(record.start.localDay)
                    affectedDays.insert(record.end.localDay)
                }
            } else if new {
                var properties: [String: JSONValue] = [
                    "value": .number(value), "unit": .string(kind.unit), "source": .string(record.source),
                    "start": .string(Timestamp.format(seconds: record.start.seconds)),
                    "utc_offset": .string(record.start.offsetText),
                ]
                if let metric { properties["metric"] = .string(metric) }
                plan.events.append(
                    HealthEvent(
                        id: HealthEvent.measurementID(
                            owner: options.owner, kind: kind, key: record.dedupeKey),
                        kind: kind, owner: options.owner, time: record.start.seconds, properties: properties))
            }
        }

        private mutating func take(_ correlation: HealthCorrelation) {
            guard correlation.type == "HKCorrelationTypeIdentifierBloodPressure" else {
                return skip("correlation not imported")
            }
            guard options.kinds.contains(.bloodPressure) else { return skip("kind not selected") }
            if let since = options.since, correlation.start.seconds < since { return skip("before --since") }
            func reading(_ suffix: String) -> HealthRecord? {
                correlation.records.first { $0.type == "HKQuantityTypeIdentifierBloodPressure" + suffix }
            }
            guard let systolic = reading("Systolic"), let diastolic = reading("Diastolic"),
                let high = HealthEventKind.bloodPressure.value(of: systolic),
                let low = HealthEventKind.bloodPressure.value(of: diastolic)
            else { return skip("blood pressure without both values") }
            guard isNew(.bloodPressure, created: correlation.creation, end: correlation.end) else { return }
            plan.events.append(
                HealthEvent(
                    id: HealthEvent.measurementID(
                        owner: options.owner, kind: .bloodPressure,
                        key: [
                            correlation.type, correlation.source, "\(correlation.start.seconds)",
                            "\(correlation.end.seconds)", "\(high)/\(low)",
                        ]),
                    kind: .bloodPressure, owner: options.owner, time: correlation.start.seconds,
                    properties: [
                        "systolic": .number(high), "diastolic": .number(low), "unit": .string("mmHg"),
                        "source": .string(correlation.source),
                        "start": .string(Timestamp.format(seconds: correlation.start.seconds)),
                        "utc_offset": .string(correlation.start.offsetText),
                    ]))
        }

        private mutating func take(_ workout: HealthWorkout) {
            plan.sources[workout.source, default: 0] += 1
            guard options.kinds.contains(.workout) else { return skip("kind not selected") }
            if let since = options.since, workout.start.seconds < since { return skip("before --since") }
            guard isNew(.workout, created: workout.creation, end: workout.end) else { return }
            let type = workout.activityType.replacingOccurrences(of: "HKWorkoutActivityType", with: "")
            let id = HealthEvent.measurementID(
                owner: options.owner, kind: .workout,
                key: [workout.activityType, workout.source, "\(workout.start.seconds)", "\(workout.end.seconds)"])
            var properties: [String: JSONValue] = [
                "type": .string(type), "source": .string(workout.source),
                "start": .string(Timestamp.format(seconds: workout.start.seconds)),
                "end": .string(Timestamp.format(seconds: workout.end.seconds)),
                "duration_s": .number(
                    DailyTotals.rounded(workout.duration ?? workout.end.seconds - workout.start.seconds)),
                "utc_offset": .string(workout.start.offsetText),
                "events": .number(Double(workout.eventCount)),
            ]
            if let distance = workout.distanceMetres {
                properties["distance_m"] = .number(DailyTotals.rounded(distance))
            }
            if let energy = workout.energyKilocalories {
                properties["energy_kcal"] = .number(DailyTotals.rounded(energy))
            }
            if let zone = workout.timeZone { properties["time_zone"] = .string(zone) }
            if let route = workout.route {
                properties["route_device"] = .string(route.source)
                plan.routes.append(WorkoutRouteInput(workoutID: id, route: route))
            }
            plan.events.append(
                HealthEvent(
                    id: id, kind: .workout, owner: options.owner, time: workout.start.seconds, properties: properties))
        }

        mutating func finish() -> HealthImportPlan {
            var present = chunkPresence.mapValues { IntervalSet($0, joining: 60) }
            for (source, spans) in presence { present[source] = IntervalSet(spans, joining: 60) }
            for kind in totals.keys.sorted(by: { $0.selectionName < $1.selectionName }) {
                plan.events += totals[kind]!.events(
                    owner: options.owner, days: affectedDays, sourceNames: sourceNames, presence: present,
                    priority: options.priority)
            }
            plan.events += sleep.events(owner: options.owner, days: affectedDays)
            return plan
        }
    }
}
