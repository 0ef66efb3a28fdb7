extension Int {
    /// `value` rounded down and held inside `range` (NaN gives the lower bound): counts of
    /// points, ticks and characters computed from sizes that come from outside (a region's
    /// radius, a requested width), where the conversion must never trap.
    init(clamping value: Double, to range: ClosedRange<Int>) {
        guard value >= Double(range.lowerBound) else {
            self = range.lowerBound
            return
        }
        guard value <= Double(range.upperBound) else {
            self = range.upperBound
            return
        }
        self = Int(value.rounded(.down))
    }
}
