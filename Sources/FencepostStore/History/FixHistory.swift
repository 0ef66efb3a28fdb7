package import FencepostCore

/// One device's accepted fixes within one hour, in time order, already encoded
/// (``FixChunkCodec``): what an ingest hands its transaction to keep
/// (``IngestTransaction/write(_:keeping:now:)``). Built a fix at a time with ``append(_:)``.
package struct FixRun: Sendable {
    package let device: String
    /// The start of the hour, in milliseconds since the epoch.
    package let hourMs: Int64
    package private(set) var firstMs: Int64 = 0
    package private(set) var lastMs: Int64 = 0
    package private(set) var count = 0
    private var encoder = FixChunkCodec.Encoder()

    /// An empty run.
    package init(device: String, hourMs: Int64) {
        self.device = device
        self.hourMs = hourMs
    }

    /// A run of `fixes` in any order: sorted by time, one kept per millisecond.
    package init(device: String, hourMs: Int64, fixes: [Fix]) {
        self.init(device: device, hourMs: hourMs)
        for fix in FixHistory.sortedDistinct(fixes) { _ = append(fix) }
    }

    /// The encoded fixes.
    package var bytes: [UInt8] { encoder.bytes }

    /// Whether `fix` (at `timeMs`, its time in whole milliseconds) comes after the run's last
    /// fix, and so can be appended.
    package func follows(_ timeMs: Int64) -> Bool {
        count == 0 || timeMs > lastMs
    }

    /// Appends `fix`, which must follow the run's last (``follows(_:)``); false, appending
    /// nothing, when it does not.
    @discardableResult
    package mutating func append(_ fix: Fix) -> Bool {
        let timeMs = Timestamp.milliseconds(fix.time)
        guard follows(timeMs) else { return false }
        if count == 0 { firstMs = timeMs }
        lastMs = timeMs
        count += 1
        encoder.append(fix, timeMs: timeMs)
        return true
    }
}

/// The stored fixes (table `fix_history`): per device and hour, one or more chunk rows, each
/// a run of fixes in time order encoded by ``FixChunkCodec``, with its count and first and last
/// times. A run that comes after a chunk's last fix (the usual case: a device's fixes arrive in
/// time order) is appended to it until it holds ``chunkLimit`` fixes; one that does not (a
/// replay, a late file) starts another chunk of the same hour. Reads merge an hour's chunks,
/// sort by time and keep one fix per millisecond.
package enum FixHistory {
    package static let hourMs: Int64 = 3_600_000
    /// The most fixes a chunk row holds: a live device's every post reads and rewrites its last
    /// chunk, so this bounds that work: about 1.8 KB, within one 4 KB SQLite page (a row past
    /// about 4 KB spills into a chain of overflow pages, each rewritten at every append), while
    /// a row per 256 fixes adds about 0.2 bytes per fix.
    package static let chunkLimit = 256

    /// The start of the hour holding `ms`.
    package static func hour(ofMs ms: Int64) -> Int64 {
        (ms / hourMs - (ms % hourMs < 0 ? 1 : 0)) * hourMs
    }

    /// Appends `runs` through `chunks` (inside the ingest's transaction); returns how many fixes
    /// were stored. A run that follows its hour's last chunk and fits in it is appended to it
    /// (re-encoded after the chunk's last fix); any other becomes a chunk of its own, its bytes
    /// as they are.
    static func append(_ runs: [FixRun], to chunks: some FixChunkWriting) async throws -> Int {
        var stored = 0
        for run in runs where run.count > 0 {
            let tail = try await chunks.lastChunk(device: run.device, hourMs: run.hourMs)
            if let tail, tail.count + run.count <= chunkLimit, run.firstMs > tail.lastMs {
                var end = FixChunkCodec.Decoder(tail.bytes)
                var encoder = FixChunkCodec.Encoder(continuing: tail.bytes, state: try end.skipToEnd())
                var fixes = FixChunkCodec.Decoder(run.bytes)
                while let fix = try fixes.next(device: run.device) { encoder.append(fix) }
                let chunk = StoredChunk(
                    number: tail.number, firstMs: tail.firstMs, lastMs: run.lastMs, count: tail.count + run.count,
                    bytes: encoder.bytes)
                try await chunks.update(chunk, device: run.device, hourMs: run.hourMs)
            } else {
                let chunk = StoredChunk(
                    number: (tail?.number ?? -1) + 1, firstMs: run.firstMs, lastMs: run.lastMs, count: run.count,
                    bytes: run.bytes)
                try await chunks.insert(chunk, device: run.device, hourMs: run.hourMs)
            }
            stored += run.count
        }
        return stored
    }

    /// The fixes in time order, one per millisecond (the first given of each).
    static func sortedDistinct(_ fixes: [Fix]) -> [Fix] {
        var sorted = fixes
        if !zip(fixes, fixes.dropFirst()).allSatisfy({ $0.time < $1.time }) {
            sorted = fixes.enumerated().sorted { ($0.element.time, $0.offset) < ($1.element.time, $1.offset) }.map(
                \.element)
        }
        var distinct: [Fix] = []
        distinct.reserveCapacity(sorted.count)
        var lastMs: Int64?
        for fix in sorted {
            let ms = Timestamp.milliseconds(fix.time)
            if ms == lastMs { continue }
            lastMs = ms
            distinct.append(fix)
        }
        return distinct
    }
}

/// One chunk row of `fix_history`, without its device and hour.
struct StoredChunk {
    /// The chunk's number within its device's hour: 0, 1, ...
    var number: Int64
    var firstMs: Int64
    var lastMs: Int64
    var count: Int
    var bytes: [UInt8]
}

/// The three statements ``FixHistory/append(_:to:)`` needs, per backend.
protocol FixChunkWriting {
    /// The highest-numbered chunk of the device's hour, if any.
    func lastChunk(device: String, hourMs: Int64) async throws -> StoredChunk?
    func insert(_ chunk: StoredChunk, device: String, hourMs: Int64) async throws
    /// Rewrites a chunk's bytes, count and last time (its first time stays).
    func update(_ chunk: StoredChunk, device: String, hourMs: Int64) async throws
}

extension FixChunkWriting {
    static var insertSQL: String {
        """
        INSERT INTO fix_history (device, hour_ms, chunk, first_ms, last_ms, fix_count, fixes)
        VALUES (?, ?, ?, ?, ?, ?, ?)
        """
    }
    static var updateSQL: String {
        "UPDATE fix_history SET last_ms = ?, fix_count = ?, fixes = ? WHERE device = ? AND hour_ms = ? AND chunk = ?"
    }
    static var lastSQL: String {
        """
        SELECT chunk, first_ms, last_ms, fix_count, fixes FROM fix_history WHERE device = ? AND hour_ms = ?
        ORDER BY chunk DESC LIMIT 1
        """
    }
}
