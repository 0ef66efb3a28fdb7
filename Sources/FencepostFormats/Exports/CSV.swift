import FencepostCore
package import Foundation

package enum CSV {
    /// A field quoted when it holds a comma, quote or line break.
    package static func field(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 == 0x2C || $0 == 0x22 || $0 == 0x0A || $0 == 0x0D }) else { return text }
        return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// Appends a field, quoted when it must be.
    package static func append(_ text: String, to line: inout String) {
        line += field(text)
    }
}

package enum LocalTime {
    /// RFC 3339 local time with the zone's offset at that instant: `2025-06-01T08:04:52.350+02:00`.
    package static func format(milliseconds: Int64, in zone: TimeZone) -> String {
        let date = Date(timeIntervalSince1970: Double(milliseconds) / 1000)
        let offset = zone.secondsFromGMT(for: date)
        let utc = Timestamp.format(milliseconds: milliseconds + Int64(offset) * 1000)
        let sign = offset < 0 ? "-" : "+"
        let hours = abs(offset) / 3600
        let minutes = abs(offset) % 3600 / 60
        return utc.dropLast() + sign + (hours < 10 ? "0" : "") + "\(hours):" + (minutes < 10 ? "0" : "") + "\(minutes)"
    }
}
