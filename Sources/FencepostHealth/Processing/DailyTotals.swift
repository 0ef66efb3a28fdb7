import FencepostCore

/// One sample of a daily-total kind, kept small: a year of Watch energy minutes is ~400 k of them.
struct DailySample: Sendable {
    var start: Double
    var end: Double
    var value: Double
    var source: Int32
    var offset: Int32
}

/// Sums a kind per local day without double counting sources that recorded the same minutes.
///
/// Sources are ranked (``SourcePriority``); a sample counts for the part of its time that no
/// better-ranked source of the same kind was present for — present meaning any of that source's
/// records covers the time, since the Watch writes no step sample for a worn minute without steps.
/// A sample's value is spread evenly over its time, so one that crosses local midnight is split.
struct DailyTotals {
    let kind: HealthEventKind
    private(set) var samples: [DailySample] = []

    init(kind: HealthEventKind) {
        self.kind = kind
    }

    mutating func add(_ record: HealthRecord, value: Double, source: Int32) {
        samples.append(
            DailySample(
                start: record.start.seconds, end: max(record.end.seconds, record.start.seconds), value: value,
                source: source, offset: Int32(record.start.offset)))
    }

    /// One event per local day in `days` (all days when nil).
    func events(
        owner: String, days: Set<Int>?, sourceNames: [String], presence: [Int32: IntervalSet], priority: SourcePriority
    ) -> [HealthEvent] {
        // Water is logged by hand, a drink at a time, often in an app of its own: another
        // source being present (a phone counting energy) says nothing about it. Only a
        // better-ranked source's own water covers a sample's time.
        let presence = kind == .water ? ownPresence() : presence
        let recording = Dictionary(samples.map { (sourceNames[Int($0.source)], $0.source) }) { first, _ in first }
        // Per source: the time better-ranked sources of this kind were present.
        var blocked: [Int32: IntervalSet] = [:]
        var better = IntervalSet()
        for name in priority.ordered(Array(recording.keys)) {
            let source = recording[name]!
            blocked[source] = better
            better = better.union(presence[source] ?? IntervalSet())
        }

        var totals: [Int: Day] = [:]
        for sample in samples {
            let offset = Double(sample.offset)
            let span = sample.end - sample.start
            var pieceStart = sample.start
            repeat {
                let day = Int(((pieceStart + offset) / 86_400).rounded(.down))
                let dayEnd = Double(day + 1) * 86_400 - offset
                let pieceEnd = min(sample.end, dayEnd)
                if days?.contains(day) ?? true {
                    let piece = Interval(start: pieceStart, end: pieceEnd)
                    let share = span > 0 ? piece.length / span : 1
                    let blocking = blocked[sample.source] ?? IntervalSet()
                    let uncovered =
                        piece.length > 0
                        ? 1 - blocking.overlap(with: piece) / piece.length
                        : (blocking.contains(piece.start) ? 0 : 1)
                    let amount = sample.value * share * uncovered
                    totals[day, default: Day(start: Double(day) * 86_400 - offset, offset: Int(offset))].add(
                        amount, source: sample.source)
                }
                pieceStart = pieceEnd
            } while pieceStart < sample.end
        }

        return totals.keys.sorted().map { day in
            let total = totals[day]!
            var sources: [String: JSONValue] = [:]
            for (source, amount) in total.bySource { sources[sourceNames[Int(source)]] = .number(Self.rounded(amount)) }
            let date = HealthDate.dateText(day: day)
            return HealthEvent(
                id: HealthEvent.dailyID(owner: owner, kind: kind, date: date), kind: kind,
                owner: owner,
                time: total.start,
                properties: [
                    "date": .string(date), "value": .number(Self.rounded(total.value)), "unit": .string(kind.unit),
                    "samples": .number(Double(total.samples)), "sources": .object(sources),
                    "utc_offset": .string(HealthDate(seconds: total.start, offset: total.offset).offsetText),
                ])
        }
    }

    /// Per source, the time its own samples of this kind cover.
    private func ownPresence() -> [Int32: IntervalSet] {
        Dictionary(grouping: samples, by: \.source).mapValues {
            IntervalSet($0.map { Interval(start: $0.start, end: $0.end) })
        }
    }

    /// Two decimals: enough for any of these units, and stable from run to run.
    static func rounded(_ value: Double) -> Double {
        (value * 100).rounded() / 100
    }

    private struct Day {
        var start: Double
        var offset: Int
        var value = 0.0
        var samples = 0
        var bySource: [Int32: Double] = [:]

        mutating func add(_ amount: Double, source: Int32) {
            value += amount
            samples += 1
            bySource[source, default: 0] += amount
        }
    }
}
