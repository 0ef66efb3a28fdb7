/// The times a fix may carry. A time outside them is not a place in anyone's history: a clock
/// reset to zero, milliseconds sent where seconds belong (the year 51102), a broken encoder.
/// Accepted, such a time would become the device's anchor and every later real fix would be
/// dropped as already seen; so it is refused before anything remembers it.
public struct FixTimeRange: Sendable, Hashable {
    /// Seconds since the epoch, inclusive.
    public var earliest: Double
    /// Seconds since the epoch, inclusive.
    public var latest: Double

    public init(earliest: Double, latest: Double) {
        self.earliest = earliest
        self.latest = latest
    }

    /// 1970-01-01T00:00:00Z: no fix is older than the epoch its protocols count from.
    public static let epoch: Double = 0

    /// For files (`ingest`, `scan`, the inbox): 1970-01-01 up to 2100-01-01. Files were recorded
    /// in the past, but simulated and generated traces may lie ahead of today, so the bound is
    /// a fixed date rather than the clock.
    public static let files = FixTimeRange(earliest: epoch, latest: 4_102_444_800)

    /// 2000-01-01T00:00:00Z: no phone or tracker posting live now has a real fix older than
    /// this. An older time is a clock reset (to 1970, or GPS's 1980) or a GPS week rollover (19.6
    /// years back): accepted, it would open a visit decades long at the first real fix.
    public static let liveEarliest: Double = 946_684_800

    /// For fixes posted live: 2000-01-01 up to a day after `now` (a phone's clock may run a
    /// little ahead, or its zone be misread, but not by more than a day).
    public static func live(now: Double) -> FixTimeRange {
        FixTimeRange(earliest: liveEarliest, latest: now + 86_400)
    }

    /// Whether `time` lies in the range; false for NaN and infinities.
    public func contains(_ time: Double) -> Bool {
        time >= earliest && time <= latest
    }

    /// Why `time` is refused, for an error message: the range, and a hint when the number
    /// reads as milliseconds (or microseconds) that belong in the range.
    public func refusal(of time: Double) -> String {
        var text =
            "time \(JSONValue.format(time)) is outside the accepted range \(Timestamp.format(seconds: earliest)) to \(Timestamp.format(seconds: latest))"
        if time.isFinite, contains(time / 1000) {
            text += "; it looks like milliseconds since the epoch: send seconds or an RFC 3339 time"
        } else if time.isFinite, contains(time / 1_000_000) {
            text += "; it looks like microseconds since the epoch: send seconds or an RFC 3339 time"
        }
        return text
    }
}
