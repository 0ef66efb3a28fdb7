import FencepostCore
import FencepostTestSupport
import PropertyBased
import Testing

/// A run of times parsed with a ``DateMemo`` (the date taken from the last time when it is the
/// same) gives what each time parsed alone gives, to the bit: times of a few dates, valid and
/// not, in any order, with and without zones and fractions.
@Suite struct DateMemoTests {
    static let dates = [
        "2025-06-01", "2025-06-02", "2024-02-29", "2025-02-29", "1969-12-31", "2025-13-01", "2025-06-0x", "2025/06/01",
    ]
    static let times = [
        "T06:04:52.350Z", "T23:59:60Z", "T24:00:00Z", "T24:00:01Z", "T08:04:52+02:00", " 15:00:00 -0700", "",
        "T06:04", "T06:04:52Q", "T01:04:52.5-05:00", "x",
    ]

    @Test func aRunOfTimesParsesAsEachAlone() async {
        await propertyCheck(count: 100, input: Gen.uint64(in: 0...UInt64.max)) { seed in
            var random = SplitMix64(seed: seed)
            var memo = DateMemo()
            for _ in 0..<200 {
                // Mostly the same date as the last time, as a trace's rows are.
                let date = Self.dates[Int(random.unit() * Double(random.unit() < 0.8 ? 2 : Self.dates.count))]
                var text = date + Self.times[Int(random.unit() * Double(Self.times.count))]
                if random.unit() < 0.05 { text = String(text.prefix(Int(random.unit() * 12))) }
                let alone = text.utf8.withContiguousStorageIfAvailable { Timestamp.parseNotingZone(utf8: $0) }
                let inRun = text.utf8.withContiguousStorageIfAvailable {
                    Timestamp.parseNotingZone(utf8: $0, memo: &memo)
                }
                #expect(alone??.seconds.bitPattern == inRun??.seconds.bitPattern, "seed \(seed): \(text)")
                #expect(alone??.zoned == inRun??.zoned, "seed \(seed): \(text)")
            }
        }
    }
}
