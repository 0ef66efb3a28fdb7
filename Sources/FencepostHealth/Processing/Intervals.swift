import FencepostCore

/// A half-open time span in seconds since the epoch.
struct Interval: Sendable, Hashable {
    var start: Double
    var end: Double

    var length: Double { end - start }
}

/// A union of time spans, kept sorted and disjoint.
struct IntervalSet: Sendable {
    private(set) var spans: [Interval] = []

    init() {}

    /// The union of any spans (sorted and merged here); spans closer than `joining` seconds merge.
    init(_ intervals: [Interval], joining: Double = 0) {
        for interval in intervals.sorted(by: { $0.start < $1.start }) where interval.end >= interval.start {
            if let last = spans.last, interval.start <= last.end + joining {
                spans[spans.count - 1].end = max(last.end, interval.end)
            } else {
                spans.append(interval)
            }
        }
    }

    /// The union of two sets.
    func union(_ other: IntervalSet) -> IntervalSet {
        IntervalSet(spans + other.spans)
    }

    /// Total seconds covered.
    var length: Double { spans.reduce(0) { $0 + $1.length } }

    /// Seconds of `interval` this set covers.
    func overlap(with interval: Interval) -> Double {
        var index = firstSpan(endingAfter: interval.start)
        var covered = 0.0
        while index < spans.count, spans[index].start < interval.end {
            covered += max(0, min(spans[index].end, interval.end) - max(spans[index].start, interval.start))
            index += 1
        }
        return covered
    }

    /// Whether an instant lies inside the set.
    func contains(_ time: Double) -> Bool {
        let index = firstSpan(endingAfter: time)
        return index < spans.count && spans[index].start <= time
    }

    /// This set with `other`'s time taken out.
    func subtracting(_ other: IntervalSet) -> IntervalSet {
        var result: [Interval] = []
        for span in spans {
            var cursor = span.start
            var index = other.firstSpan(endingAfter: span.start)
            while index < other.spans.count, other.spans[index].start < span.end {
                let cut = other.spans[index]
                if cut.start > cursor { result.append(Interval(start: cursor, end: cut.start)) }
                cursor = max(cursor, cut.end)
                index += 1
            }
            if cursor < span.end { result.append(Interval(start: cursor, end: span.end)) }
        }
        var set = IntervalSet()
        set.spans = result
        return set
    }

    /// The index of the first span whose end is after `time`.
    private func firstSpan(endingAfter time: Double) -> Int {
        spans.partitionPoint { $0.end > time }
    }
}
