public import Foundation

/// The IANA zone of times a file writes without a zone or offset (`2020-06-30T00:05:00`): turns
/// such a wall-clock time into UTC. A trace reader holds its own copy; the offset found last is
/// reused while the times stay before the zone's next transition.
public struct LocalTimeZone: Sendable {
    public let zone: TimeZone
    /// The last offset found, the UTC time it was found for and how long it holds after.
    private var cached: (from: Double, until: Double, offset: Double)?

    /// Nil for a name the system's zone database does not know.
    public init?(identifier: String) {
        guard let zone = TimeZone(identifier: identifier) else { return nil }
        self.zone = zone
    }

    public var identifier: String { zone.identifier }

    /// The UTC seconds of a wall-clock time in the zone, given as if it were UTC (what
    /// ``Timestamp/parseNotingZone(utf8:)`` returns for a time without a zone). In the hour a
    /// change to standard time repeats, the later of the two; in the hour skipped by a change
    /// to summer time, the offset from before the change.
    public mutating func utc(fromLocal local: Double) -> Double {
        let first = offset(at: local)
        let guess = local - first
        let second = offset(at: guess)
        guard second != first else { return guess }
        let retry = local - second
        if offset(at: retry) == second { return retry }
        // Neither offset gives back the time: it lies in the skipped hour, and the offset before
        // the change is the smaller one.
        return local - min(first, second)
    }

    private mutating func offset(at utc: Double) -> Double {
        if let cached, utc >= cached.from, utc < cached.until { return cached.offset }
        let date = Date(timeIntervalSince1970: utc)
        let offset = Double(zone.secondsFromGMT(for: date))
        // A day at most: a zone may also change its standard offset, which is no daylight
        // saving transition.
        let transition = zone.nextDaylightSavingTimeTransition(after: date)?.timeIntervalSince1970 ?? .infinity
        cached = (utc, min(transition, utc + 86_400), offset)
        return offset
    }
}
