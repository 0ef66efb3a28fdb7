import ArgumentParser
import FencepostCore
import Foundation

/// A time given on the command line: RFC 3339 (`2026-11-01T00:00:00Z`), or a duration back
/// from now (`90m`, `12h`, `30d`, `2w`).
enum TimeArgument {
    static func parse(_ text: String, now: Double = Date().timeIntervalSince1970) -> Double? {
        if let time = Timestamp.parse(text) { return time }
        guard let unit = text.last, let count = Double(text.dropLast()), count >= 0, count.isFinite else { return nil }
        let seconds: Double
        switch unit {
        case "s": seconds = 1
        case "m": seconds = 60
        case "h": seconds = 3600
        case "d": seconds = 86400
        case "w": seconds = 7 * 86400
        default: return nil
        }
        return now - count * seconds
    }

    /// Refuses each option whose value is neither, naming it.
    static func check(_ options: (String, String?)...) throws {
        for (name, value) in options {
            if let value, parse(value) == nil {
                throw ValidationError(
                    "\(name) is not an RFC 3339 time (2025-06-01T08:00:00Z) or a duration back from now (30d, 12h): \(value)"
                )
            }
        }
    }
}
