import FencepostCore
package import Foundation

package enum CSV {
    /// A field quoted when it holds a comma, quote or line break.
    package static func field(_ text: String) -> String {
        guard mustBeQuoted(text) else { return text }
        return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// Whether the text holds a comma, quote or line break: looked for in its bytes where they
    /// lie together, as a native string's do (each event's fields go through here).
    private static func mustBeQuoted(_ text: String) -> Bool {
        func special(_ byte: UInt8) -> Bool { byte == 0x2C || byte == 0x22 || byte == 0x0A || byte == 0x0D }
        return text.utf8.withContiguousStorageIfAvailable { $0.contains(where: special) }
            ?? text.utf8.contains(where: special)
    }

    /// A line of the fields, each quoted when it must be, separated by commas, with its line
    /// break. The usual line, nothing to quote, is laid down in one string of its length
    /// (exports and `scan` write one per event: appending field by field cost more than
    /// making the event).
    package static func line(_ fields: [String]) -> String {
        var length = fields.count + 1  // the commas and the line break, with room to spare
        for field in fields {
            guard !mustBeQuoted(field) else { return fields.map(Self.field).joined(separator: ",") + "\n" }
            length += field.utf8.count
        }
        return String(unsafeUninitializedCapacity: length) { line in
            var at = 0
            for (index, field) in fields.enumerated() {
                if index > 0 {
                    line[at] = UInt8(ascii: ",")
                    at += 1
                }
                at = line[at...].initialize(fromContentsOf: field.utf8)
            }
            line[at] = UInt8(ascii: "\n")
            return at + 1
        }
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
