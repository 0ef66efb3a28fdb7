package import FencepostCore

/// What the live page reads to draw every device's recent track from the history, whichever
/// instance took its fixes.
extension Store {
    /// The devices whose state an ingest saved after `ms` (milliseconds since the epoch, by the
    /// saving instance's clock: `devices.updated_at`), with when, newest first.
    package func devicesSaved(after ms: Int64) async throws -> [(device: String, savedMs: Int64)] {
        try await read { tx in
            var saved: [(device: String, savedMs: Int64)] = []
            try await tx.forEachRow(
                "SELECT device, updated_at FROM devices WHERE updated_at > ?",
                [.text(Timestamp.format(milliseconds: ms))]
            ) { row in
                let text: String = row["updated_at"]
                // Written by `Timestamp.format`: always parses.
                guard let seconds = Timestamp.parse(text) else { return }
                saved.append((row["device"], Timestamp.milliseconds(seconds)))
            }
            return saved.sorted { ($0.savedMs, $0.device) > ($1.savedMs, $1.device) }
        }
    }

    /// Calls `body` with the stored hours of `device` newest first (each hour's fixes sorted and
    /// distinct), back to `span` hours before its newest one, until `body` returns false.
    package func newestHours(device: String, span: Int, _ body: ([Fix]) throws -> Bool) async throws {
        try await read { tx in
            let hours: [Int64] = try await tx.values(
                """
                SELECT DISTINCT hour_ms FROM fix_history WHERE device = ?
                    AND hour_ms >= (SELECT MAX(hour_ms) FROM fix_history WHERE device = ?) - ?
                ORDER BY hour_ms DESC
                """, [.text(device), .text(device), .integer(Int64(span) * FixHistory.hourMs)])
            for hour in hours {
                let fixes = try await Self.hour(device: device, hourMs: hour, tx: tx)
                if !fixes.isEmpty, try !body(fixes) { return }
            }
        }
    }
}
