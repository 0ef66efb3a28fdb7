import FencepostCore
import Testing

@Suite struct TimestampTests {
    @Test(arguments: [
        ("2025-06-01T06:04:52.350Z", 1_748_757_892.35),
        ("2025-06-01T06:04:52Z", 1_748_757_892),
        ("2025-06-01t06:04:52z", 1_748_757_892),
        ("2025-06-01T08:04:52+02:00", 1_748_757_892),
        ("2025-06-01T01:04:52.5-05:00", 1_748_757_892.5),
        ("2019-06-11 15:00:00 -0700", 1_560_290_400),  // Apple Health
        ("2008-10-23 02:53:04", 1_224_730_384),  // GeoLife: no offset is UTC
        ("2025-06-01T06:04", 1_748_757_840),
        ("2025-06-01", 1_748_736_000),
        ("1969-12-31T23:59:59Z", -1),
        ("2016-12-31T23:59:60Z", 1_483_228_800),  // a leap second folds into the next minute
        ("2024-02-29T12:00:00Z", 1_709_208_000),
        ("2000-02-29", 951_782_400),
        ("2025-06-01T24:00:00Z", 1_748_822_400),  // the end of the day is the next one's start
    ])
    func parsesTheFormsTracesUse(text: String, seconds: Double) {
        #expect(Timestamp.parse(text) == seconds)
    }

    @Test(arguments: [
        "", "2025", "2025-13-01T00:00:00Z", "2025-06-01T25:00:00Z", "2025-06-01T06:04:52Q",
        "2025-06-01T06:04:52+0", "06/01/2025 06:04", "2025-06-01T06:04:52Z trailing",
        // Days a month does not have, and times past the end of the day.
        "2025-02-29T00:00:00Z", "2025-02-31T12:00:00Z", "1900-02-29", "2025-04-31", "2025-06-00",
        "2025-06-01T24:30:00Z", "2025-06-01T24:00:01Z",
    ])
    func refusesWhatIsNotADateTime(text: String) {
        #expect(Timestamp.parse(text) == nil)
    }

    @Test func formatsUTCWithMillisecondsAcrossTheCalendar() {
        #expect(Timestamp.format(milliseconds: 0) == "1970-01-01T00:00:00.000Z")
        #expect(Timestamp.format(milliseconds: 1_748_757_892_350) == "2025-06-01T06:04:52.350Z")
        #expect(Timestamp.format(milliseconds: -1) == "1969-12-31T23:59:59.999Z")
        #expect(Timestamp.format(milliseconds: 951_782_400_000) == "2000-02-29T00:00:00.000Z")
        #expect(Timestamp.format(seconds: 1_748_757_892.3499) == "2025-06-01T06:04:52.350Z")
        // The first and last instants of four-digit years, and beyond them.
        #expect(Timestamp.format(milliseconds: -62_167_219_200_000) == "0000-01-01T00:00:00.000Z")
        #expect(Timestamp.format(milliseconds: 253_402_300_799_999) == "9999-12-31T23:59:59.999Z")
        #expect(Timestamp.format(milliseconds: 253_402_300_800_000) == "10000-01-01T00:00:00.000Z")
        // Round trip over a spread of instants, including leap days and century years.
        var milliseconds: Int64 = -2_208_988_800_000  // 1900-01-01
        while milliseconds < 4_102_444_800_000 {  // 2100-01-01
            #expect(Timestamp.parse(Timestamp.format(milliseconds: milliseconds)) == Double(milliseconds) / 1000)
            milliseconds += 86_400_000 * 37 + 3_600_123
        }
    }
}
