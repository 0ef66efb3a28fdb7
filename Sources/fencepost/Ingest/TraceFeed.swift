import FencepostCore
import FencepostFormats
import Foundation

/// Feeds trace files to `ingest` or `scan`, one input per file, each parsed on a thread of its
/// own ahead of the consumer, with progress on a terminal.
struct TraceFeed {
    /// Takes one input: reads it (with `open`) and calls the reading's `next` for each of its
    /// fixes, until nil.
    typealias Consumer = (_ input: Input) async throws -> Void

    /// One file to read: `open` starts a reading of it, from its beginning, as often as asked
    /// when `rereadable` (standard input is not).
    struct Input {
        let open: () throws -> () throws -> Fix?
        /// ``open`` for a consumer that takes the fixes a batch at a time.
        let openBatches: () throws -> () throws -> [Fix]?
        let rereadable: Bool
    }

    let format: TraceFormat?
    let options: TraceReaderOptions
    private var progress = Progress()

    init(format: TraceFormat?, options: TraceReaderOptions) {
        self.format = format
        self.options = options
    }

    /// The files a feed could not take.
    struct Refusals {
        /// One line per file: its name, line and reason.
        var lines: [String] = []
        /// Files that could not be opened or read at all (missing, a directory).
        var unreadable = 0
        /// Files taken (their fixes, if any, ingested).
        var taken = 0

        /// Exit 3 when a file could not be opened or read, 1 when only content was refused.
        var failure: CommandFailure? {
            guard !lines.isEmpty else { return nil }
            return unreadable > 0 ? .io(lines.joined(separator: "\n")) : .invalidInput(lines)
        }
    }

    /// Feeds every file to `consume` and the readers' skipped-record counts to `skipped`;
    /// returns the refusal of each file that could not be read or was malformed (the others
    /// still count).
    mutating func feed(_ files: [String], to consume: Consumer, skipped: ([String: Int]) -> Void) async throws
        -> Refusals
    {
        var refusals = Refusals()
        for file in files {
            do {
                try await feed(file, to: consume, skipped: skipped)
                refusals.taken += 1
            } catch let error as TraceReadError {
                progress.clear()
                if error.unreadable {
                    refusals.unreadable += 1
                    refusals.lines.append("error: \(error)")
                } else {
                    refusals.lines.append("error: \(error) (nothing of it was written)")
                }
            }
        }
        return refusals
    }

    private mutating func feed(_ file: String, to consume: Consumer, skipped: ([String: Int]) -> Void) async throws {
        let (format, options) = (format, options)
        var progress = self.progress
        defer { self.progress = progress }
        var reading: PrefetchingReader?
        let start = { () throws -> (PrefetchingReader, ByteSource) in
            let source = try ByteSource(path: file)
            let reader = PrefetchingReader { () throws(TraceReadError) in
                try TraceOpener.open(source, format: format, options: options)
            }
            reading = reader
            return (reader, source)
        }
        let open = { () throws -> () throws -> Fix? in
            let (reader, source) = try start()
            var count = 0
            return {
                guard let fix = try reader.next() else { return nil }
                count += 1
                if count & 0xFFFF == 0 { progress.update(Self.progressLine(file, source, count)) }
                return fix
            }
        }
        let openBatches = { () throws -> () throws -> [Fix]? in
            let (reader, source) = try start()
            var count = 0
            return {
                guard let batch = try reader.nextBatch() else { return nil }
                let before = count
                count += batch.count
                if count >> 16 != before >> 16 { progress.update(Self.progressLine(file, source, count)) }
                return batch
            }
        }
        try await consume(Input(open: open, openBatches: openBatches, rereadable: file != "-"))
        progress.clear()
        if let reading { skipped(reading.skipped) }
    }

    static func progressLine(_ file: String, _ source: ByteSource, _ fixes: Int) -> String {
        let megabytes = Double(source.bytesRead) / 1_048_576
        guard let size = source.size, size > 0 else {
            return "\(file): \(fixes) fixes, \(String(format: "%.0f", megabytes)) MB"
        }
        let percent = min(100, Double(source.bytesRead) * 100 / Double(size))
        return "\(file): \(String(format: "%.0f", percent))% (\(fixes) fixes)"
    }
}
