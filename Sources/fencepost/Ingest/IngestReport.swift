import FencepostCore
import FencepostStore

/// The ingest summary, for people (stderr) and scripts (JSON).
enum IngestReport {
    static func lines(_ summary: IngestSummary, regions: Int) -> [String] {
        let dropped = summary.dropped.values.reduce(0, +)
        let skipped = summary.skipped.values.reduce(0, +)
        var lines = [
            "fixes: \(summary.fixesRead) read, \(summary.fixesAccepted) accepted, \(dropped) dropped, \(skipped) records skipped"
                + " (\(summary.devices.count) device\(summary.devices.count == 1 ? "" : "s"), \(regions) regions)"
        ]
        if dropped > 0 {
            lines.append("dropped: " + summary.dropped.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.key.rawValue) \($0.value)" }.joined(separator: ", "))
        }
        if skipped > 0 {
            lines.append("skipped: " + summary.skipped.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
        }
        lines.append("events: " + EventKind.allCases.map { "\($0.rawValue) \(summary.events[$0] ?? 0)" }.joined(separator: ", "))
        lines.append("visits: \(summary.visitsOpened) opened, \(summary.visitsClosed) closed")
        return lines
    }

    static func json(_ summary: IngestSummary, regions: Int) -> JSONValue {
        func counts<K>(_ values: [K: Int], _ key: (K) -> String) -> JSONValue {
            .object(Dictionary(uniqueKeysWithValues: values.map { (key($0.key), .number(Double($0.value))) }))
        }
        return .object([
            "fixes_read": .number(Double(summary.fixesRead)),
            "fixes_accepted": .number(Double(summary.fixesAccepted)),
            "dropped": counts(summary.dropped, \.rawValue),
            "skipped": counts(summary.skipped, { $0 }),
            "events": counts(summary.events, \.rawValue),
            "visits_opened": .number(Double(summary.visitsOpened)),
            "visits_closed": .number(Double(summary.visitsClosed)),
            "devices": .array(summary.devices.sorted().map(JSONValue.string)),
            "regions": .number(Double(regions)),
        ])
    }
}
