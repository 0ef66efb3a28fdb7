import FencepostCore
import Testing

/// The delays between retries: the quick ones as given, then doubling from the last quick one
/// with ±25 % jitter, never past the cap.
@Suite struct RetryScheduleTests {
    @Test func theQuickRetriesComeFirstAsGiven() {
        let schedule = RetrySchedule()
        #expect((1...3).map(schedule.delay(beforeRetry:)) == [0, 1, 3])
        #expect(RetrySchedule(quick: [1, 3]).delay(beforeRetry: 1) == 1)
        #expect(
            RetrySchedule(quick: [0, 5, 60], cap: 2).delay(beforeRetry: 3) == 2, "the cap holds for the quick ones too")
    }

    /// Retry 4 waits about 6 s, retry 5 about 12 s, … each within ±25 % of its base, the bases
    /// doubling, and every draw different enough to spread clients apart.
    @Test func laterRetriesDoubleWithJitterWithinAQuarter() {
        let schedule = RetrySchedule()
        for retry in 4...9 {
            let base = 3 * Double(1 << (retry - 3))
            let delays = (0..<2_000).map { _ in schedule.delay(beforeRetry: retry) }
            #expect(
                delays.allSatisfy { $0 >= base * 0.75 && $0 <= base * 1.25 },
                "retry \(retry): \(delays.min()!)…\(delays.max()!) around \(base)")
            let mean = delays.reduce(0, +) / Double(delays.count)
            #expect(abs(mean - base) < base * 0.03, "retry \(retry): mean \(mean) around \(base)")
            // Uniform over ±25 %: both ends of the range are reached within a few percent.
            #expect(delays.min()! < base * 0.78 && delays.max()! > base * 1.22)
        }
    }

    @Test func delaysNeverPassTheCap() {
        let schedule = RetrySchedule(cap: 300)
        // Retry 10's base is 1,536 s: capped, the jitter only shortens it (to no less than 225 s).
        for retry in [10, 20, 63, 64, 1_000, Int.max] {
            let delays = (0..<500).map { _ in schedule.delay(beforeRetry: retry) }
            #expect(delays.allSatisfy { $0 >= 225 && $0 <= 300 }, "retry \(retry)")
        }
        let quick = RetrySchedule(quick: [0, 0.05, 0.1], cap: 0.2)
        #expect((4...40).allSatisfy { quick.delay(beforeRetry: $0) <= 0.2 })
    }
}
