/// Delays between retries of a failed delivery: the first retries are quick (0 s, 1 s, 3 s),
/// then the delay doubles up to a cap, with jitter (±25 % past the quick ones) so many
/// clients that failed together do not retry together.
public struct RetrySchedule: Sendable {
    public var quick: [Double]
    public var cap: Double

    public init(quick: [Double] = [0, 1, 3], cap: Double = 300) {
        self.quick = quick
        self.cap = cap
    }

    /// Seconds to wait before retry number `retry` (1 for the first retry after a failure).
    public func delay(beforeRetry retry: Int) -> Double {
        if retry <= quick.count { return min(quick[max(retry, 1) - 1], cap) }
        let last = quick.last ?? 1
        let base = min(max(last, 1) * pow2(retry - quick.count), cap)
        return min(base * Double.random(in: 0.75...1.25), cap)
    }

    private func pow2(_ exponent: Int) -> Double {
        exponent >= 60 ? .infinity : Double(1 << exponent)
    }
}
