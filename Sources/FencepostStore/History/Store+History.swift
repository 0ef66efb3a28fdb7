package import FencepostCore
package import Foundation

extension Store {
    /// Days of fixes the store keeps when nothing has set it.
    package static let defaultHistoryDays = 365

    /// Days of fixes this store keeps (`history_days`, default 365; 0 keeps none), by the
    /// fixes' own times: ``pruneHistory(now:)`` deletes the hours that have grown older. An
    /// ingest stores old fixes too (an archive imported is there to be looked at) until then.
    package func historyDays() async throws -> Int {
        try await read { tx in
            try await tx.value("SELECT value FROM store_meta WHERE key = 'history_days'") ?? Self.defaultHistoryDays
        }
    }

    /// Sets ``historyDays()`` for every process using this store.
    package func setHistoryDays(_ days: Int) async throws {
        precondition(days >= 0, "history_days is never negative")
        try await write { tx in
            try await tx.execute(
                """
                INSERT INTO store_meta (key, value) VALUES ('history_days', ?)
                ON CONFLICT(key) DO UPDATE SET value = excluded.value
                """, Int64(days))
        }
    }

    /// Deletes the stored hours that ended more than ``historyDays()`` before `now` (all of
    /// them with a retention of 0); returns how many fixes went.
    @discardableResult
    package func pruneHistory(now: Date = Date()) async throws -> Int {
        let days = try await historyDays()
        let cutoff = Timestamp.milliseconds(now.timeIntervalSince1970 - Double(days) * 86_400)
        // Whole hours only: the hour holding the cutoff still has fixes to keep.
        let before = days == 0 ? Int64.max : FixHistory.hour(ofMs: cutoff)
        return try await write { tx in
            let fixes: Int64 =
                try await tx.value(
                    "SELECT CAST(COALESCE(SUM(fix_count), 0) AS BIGINT) FROM fix_history WHERE hour_ms < ?", before)
                ?? 0
            try await tx.execute("DELETE FROM fix_history WHERE hour_ms < ?", before)
            return Int(fixes)
        }
    }

    /// Deletes every stored fix of `device`; returns how many there were.
    @discardableResult
    package func deleteHistory(device: String) async throws -> Int {
        try await write { tx in
            let fixes: Int64 =
                try await tx.value(
                    "SELECT CAST(COALESCE(SUM(fix_count), 0) AS BIGINT) FROM fix_history WHERE device = ?", device) ?? 0
            try await tx.execute("DELETE FROM fix_history WHERE device = ?", device)
            return Int(fixes)
        }
    }

    /// The devices with stored fixes, sorted.
    package func historyDevices() async throws -> [String] {
        try await read { tx in try await tx.values("SELECT DISTINCT device FROM fix_history ORDER BY device") }
    }

    /// What the history holds: fixes and chunk rows, the encoded bytes, and the first and last
    /// fix's times (seconds), for one device or all. (The cast tells PostgreSQL the type of a
    /// parameter that is only ever NULL-tested; without it, the statement for all devices failed.)
    package func historyStats(device: String? = nil) async throws -> HistoryStats {
        try await read { tx in
            let row = try await tx.row(
                """
                SELECT CAST(COALESCE(SUM(fix_count), 0) AS BIGINT) AS fixes, COUNT(*) AS chunks,
                    CAST(COALESCE(SUM(length(fixes)), 0) AS BIGINT) AS bytes,
                    MIN(first_ms) AS first_ms, MAX(last_ms) AS last_ms
                FROM fix_history WHERE device = ? OR CAST(? AS TEXT) IS NULL
                """, device, device)
            let first: Int64? = row?["first_ms"]
            let last: Int64? = row?["last_ms"]
            return HistoryStats(
                fixes: row?["fixes"] ?? 0, chunks: row?["chunks"] ?? 0, bytes: row?["bytes"] ?? 0,
                first: first.map { Double($0) / 1000 }, last: last.map { Double($0) / 1000 })
        }
    }

    /// Calls `body` with the stored fixes of `device` from `since` to `until` (seconds, both
    /// included; nil: no bound), in time order, one per millisecond, an hour's worth at a time
    /// (an hour's chunks merged): memory holds one hour, whatever the range. Pages of hours are
    /// read in transactions of their own, and `body` runs between them, outside any (it may
    /// write to a network). A device with nothing stored calls `body` never.
    package func readTrack(
        device: String, since: Double? = nil, until: Double? = nil, _ body: ([Fix]) async throws -> Void
    ) async throws {
        let sinceMs = since.map(Timestamp.milliseconds) ?? Int64.min
        let untilMs = until.map(Timestamp.milliseconds) ?? Int64.max
        var fromHour = sinceMs == Int64.min ? Int64.min : FixHistory.hour(ofMs: sinceMs)
        while true {
            let (hours, lastHour) = try await readHours(
                device: device, from: fromHour, through: untilMs, limit: Self.hoursPerPage)
            for fixes in hours {
                let kept = fixes.filter {
                    let ms = Timestamp.milliseconds($0.time)
                    return ms >= sinceMs && ms <= untilMs
                }
                if !kept.isEmpty { try await body(kept) }
            }
            guard let lastHour else { return }
            fromHour = lastHour + FixHistory.hourMs
        }
    }

    /// The last stored fix at or before `time` and the first at or after it (the same fix
    /// twice when one is at `time`): what ``readTrack`` would give around it.
    package func fixesAround(device: String, time: Double) async throws -> (before: Fix?, after: Fix?) {
        let ms = Timestamp.milliseconds(time)
        return try await read { tx in
            var before: Fix?
            var after: Fix?
            if let hour: Int64 = try await tx.value(
                "SELECT MAX(hour_ms) FROM fix_history WHERE device = ? AND hour_ms <= ? AND first_ms <= ?",
                device, FixHistory.hour(ofMs: ms), ms)
            {
                before = try await Self.hour(device: device, hourMs: hour, tx: tx).last {
                    Timestamp.milliseconds($0.time) <= ms
                }
            }
            if let hour: Int64 = try await tx.value(
                "SELECT MIN(hour_ms) FROM fix_history WHERE device = ? AND hour_ms >= ? AND last_ms >= ?",
                device, FixHistory.hour(ofMs: ms), ms)
            {
                after = try await Self.hour(device: device, hourMs: hour, tx: tx).first {
                    Timestamp.milliseconds($0.time) >= ms
                }
            }
            return (before, after)
        }
    }

    /// Hours read per transaction by ``readTrack``.
    static let hoursPerPage = 48

    /// Up to `limit` stored hours of `device`, from the hour starting at `from`, none starting
    /// after `through`: each hour's fixes sorted and distinct, and the last hour read when there
    /// may be more (nil: there are none).
    private func readHours(device: String, from: Int64, through: Int64, limit: Int) async throws
        -> (hours: [[Fix]], lastHour: Int64?)
    {
        try await read { tx in
            let hours: [Int64] = try await tx.values(
                """
                SELECT DISTINCT hour_ms FROM fix_history WHERE device = ? AND hour_ms >= ? AND hour_ms <= ?
                ORDER BY hour_ms LIMIT \(limit)
                """, [.text(device), .integer(from), .integer(through)])
            guard let first = hours.first, let last = hours.last else { return ([], nil) }
            var result: [[Fix]] = []
            var current: [Fix] = []
            var currentHour = first
            try await tx.forEachRow(
                """
                SELECT hour_ms, fixes FROM fix_history WHERE device = ? AND hour_ms >= ? AND hour_ms <= ?
                ORDER BY hour_ms, chunk
                """, [.text(device), .integer(first), .integer(last)]
            ) { row in
                let hour: Int64 = row["hour_ms"]
                if hour != currentHour {
                    result.append(FixHistory.sortedDistinct(current))
                    current = []
                    currentHour = hour
                }
                try Self.decode(row["fixes"], device: device, into: &current)
            }
            result.append(FixHistory.sortedDistinct(current))
            return (result.filter { !$0.isEmpty }, hours.count == limit ? last : nil)
        }
    }

    /// One stored hour's fixes, sorted and distinct.
    static func hour(device: String, hourMs: Int64, tx: any SQLTransaction) async throws -> [Fix] {
        var fixes: [Fix] = []
        try await tx.forEachRow(
            "SELECT fixes FROM fix_history WHERE device = ? AND hour_ms = ? ORDER BY chunk",
            [.text(device), .integer(hourMs)]
        ) { row in try decode(row["fixes"], device: device, into: &fixes) }
        return FixHistory.sortedDistinct(fixes)
    }

    private static func decode(_ bytes: [UInt8], device: String, into fixes: inout [Fix]) throws {
        var decoder = FixChunkCodec.Decoder(bytes)
        while let fix = try decoder.next(device: device) { fixes.append(fix) }
    }
}

/// What the history holds (``Store/historyStats(device:)``).
package struct HistoryStats: Sendable, Equatable {
    package var fixes: Int
    package var chunks: Int
    /// The encoded fixes' bytes (rows and indexes not counted).
    package var bytes: Int
    /// The first and last fix's times, seconds; nil when nothing is stored.
    package var first: Double?
    package var last: Double?
}
