import FencepostCore

/// PostgreSQL's writes of kept fixes (``FixHistory``) for a batch of runs in three statements
/// (one when nothing is stored for their hours yet) instead of two per run: the last chunk of
/// every device and hour the runs touch, read at once; the appends worked out in memory
/// (``FixHistory/append(_:to:)`` over those chunks); then the new chunks in multi-row inserts and
/// the grown ones in one `UPDATE ... FROM (VALUES ...)`. A live group commit of many devices
/// pays a round trip or two, not two per device.
struct PostgresFixChunks {
    let transaction: PostgresTransaction
    /// Rows per statement: PostgreSQL takes at most 65,535 values in one.
    private static let rowsPerStatement = 1_000

    func keep(_ runs: [FixRun]) async throws -> Int {
        let planned = Planned()
        var keys: [Key] = []
        var seen = Set<Key>()
        for run in runs where seen.insert(Key(device: run.device, hourMs: run.hourMs)).inserted {
            keys.append(Key(device: run.device, hourMs: run.hourMs))
        }
        for start in stride(from: 0, to: keys.count, by: Self.rowsPerStatement) {
            let chunk = keys[start..<min(start + Self.rowsPerStatement, keys.count)]
            let pairs = Array(repeating: "(?::text, ?::bigint)", count: chunk.count).joined(separator: ", ")
            for row in try await transaction.rows(
                """
                SELECT DISTINCT ON (device, hour_ms) device, hour_ms, chunk, first_ms, last_ms, fix_count, fixes
                FROM fix_history WHERE (device, hour_ms) IN (\(pairs)) ORDER BY device, hour_ms, chunk DESC
                """, chunk.flatMap { [SQLValue.text($0.device), .integer($0.hourMs)] })
            {
                planned.tails[Key(device: row["device"], hourMs: row["hour_ms"])] = StoredChunk(
                    number: row["chunk"], firstMs: row["first_ms"], lastMs: row["last_ms"], count: row["fix_count"],
                    bytes: row["fixes"])
            }
        }
        let stored = try await FixHistory.append(runs, to: planned)
        try await write(planned)
        return stored
    }

    private func write(_ planned: Planned) async throws {
        let rows = planned.rows.values.sorted {
            ($0.key.device, $0.key.hourMs, $0.chunk.number) < ($1.key.device, $1.key.hourMs, $1.chunk.number)
        }
        let inserts = rows.filter(\.isNew)
        let updates = rows.filter { !$0.isNew }
        for start in stride(from: 0, to: inserts.count, by: Self.rowsPerStatement) {
            let chunk = inserts[start..<min(start + Self.rowsPerStatement, inserts.count)]
            let tuples = Array(repeating: "(?, ?, ?, ?, ?, ?, ?)", count: chunk.count).joined(separator: ", ")
            try await transaction.execute(
                "INSERT INTO fix_history (device, hour_ms, chunk, first_ms, last_ms, fix_count, fixes) VALUES \(tuples)",
                chunk.flatMap { row in
                    [
                        SQLValue.text(row.key.device), .integer(row.key.hourMs), .integer(row.chunk.number),
                        .integer(row.chunk.firstMs), .integer(row.chunk.lastMs), .integer(Int64(row.chunk.count)),
                        .blob(row.chunk.bytes),
                    ]
                })
        }
        for start in stride(from: 0, to: updates.count, by: Self.rowsPerStatement) {
            let chunk = updates[start..<min(start + Self.rowsPerStatement, updates.count)]
            let tuples = Array(
                repeating: "(?::text, ?::bigint, ?::bigint, ?::bigint, ?::bigint, ?::bytea)", count: chunk.count
            ).joined(separator: ", ")
            try await transaction.execute(
                """
                UPDATE fix_history AS h SET last_ms = c.last_ms, fix_count = c.fix_count, fixes = c.fixes
                FROM (VALUES \(tuples)) AS c (device, hour_ms, chunk, last_ms, fix_count, fixes)
                WHERE h.device = c.device AND h.hour_ms = c.hour_ms AND h.chunk = c.chunk
                """,
                chunk.flatMap { row in
                    [
                        SQLValue.text(row.key.device), .integer(row.key.hourMs), .integer(row.chunk.number),
                        .integer(row.chunk.lastMs), .integer(Int64(row.chunk.count)), .blob(row.chunk.bytes),
                    ]
                })
        }
    }

    private struct Key: Hashable {
        var device: String
        var hourMs: Int64
    }

    /// The chunks as the batch leaves them, held in memory until written.
    private final class Planned: FixChunkWriting {
        /// Per device and hour, its highest-numbered chunk as it stands.
        var tails: [Key: StoredChunk] = [:]
        /// Every chunk the batch inserts or changes, by device, hour and number; `isNew` when it
        /// was not stored before the batch.
        var rows: [RowKey: Row] = [:]

        struct RowKey: Hashable {
            var key: Key
            var number: Int64
        }

        struct Row {
            var key: Key
            var chunk: StoredChunk
            var isNew: Bool
        }

        func lastChunk(device: String, hourMs: Int64) -> StoredChunk? {
            tails[Key(device: device, hourMs: hourMs)]
        }

        func insert(_ chunk: StoredChunk, device: String, hourMs: Int64) {
            let key = Key(device: device, hourMs: hourMs)
            tails[key] = chunk
            rows[RowKey(key: key, number: chunk.number)] = Row(key: key, chunk: chunk, isNew: true)
        }

        func update(_ chunk: StoredChunk, device: String, hourMs: Int64) {
            let key = Key(device: device, hourMs: hourMs)
            tails[key] = chunk
            let rowKey = RowKey(key: key, number: chunk.number)
            rows[rowKey] = Row(key: key, chunk: chunk, isNew: rows[rowKey]?.isNew ?? false)
        }
    }
}
