import Foundation

/// Text records put in order by a key (a time in milliseconds, then an id), with memory bounded
/// whatever their number: past `limit` records, the ones held are sorted and spilled to a
/// temporary file as a run, and ``drain(_:)`` merges the runs back. Records of an input that
/// was refused are left out (``discard(input:)``); of records with equal keys, the first
/// added is kept (as a store keeps the first row with an id).
final class SortedSpool {
    struct Record {
        var milliseconds: Int64
        var id: String
        /// Which input the record came from.
        var input: Int
        var text: String

        static func < (a: Record, b: Record) -> Bool {
            (a.milliseconds, a.id) < (b.milliseconds, b.id)
        }
    }

    private let limit: Int
    private var held: [Record] = []
    private var runs: [URL] = []
    private var discarded: Set<Int> = []

    /// 8,192 records (a few MiB of text) by default: a 10 M-fix scan's 200,000 events and
    /// visits held 50,000 at a time peaked at 1.8× a 1 M-fix scan's memory; this many keeps
    /// both within a few MiB of each other, and a spilled run costs a sort and one file.
    init(limit: Int = 8_192) {
        self.limit = limit
    }

    deinit {
        for run in runs { try? FileManager.default.removeItem(at: run) }
    }

    func add(_ record: Record) throws {
        held.append(record)
        if held.count >= limit {
            try spill()
        }
    }

    /// Leaves out every record of `input`.
    func discard(input: Int) {
        discarded.insert(input)
        held.removeAll { $0.input == input }
    }

    /// Calls `body` with each record's text in key order, then forgets them all.
    func drain(_ body: (String) throws -> Void) throws {
        sortHeld()
        var sources: [RunReader] = try runs.map { try RunReader(url: $0) }
        var next = 0
        var last: (Int64, String)?
        while true {
            // The smallest head among the runs and the records held (a handful of runs at most);
            // at equal keys the earliest added: earlier runs first, the records held last.
            var best: Record?
            var bestSource = sources.count
            for (index, source) in sources.enumerated() {
                if let head = source.current, best.map({ head < $0 }) ?? true {
                    best = head
                    bestSource = index
                }
            }
            if next < held.count, best.map({ held[next] < $0 }) ?? true {
                best = held[next]
                bestSource = sources.count
            }
            guard let record = best else { break }
            if bestSource == sources.count { next += 1 } else { try sources[bestSource].advance() }
            guard !discarded.contains(record.input) else { continue }
            if let last, last == (record.milliseconds, record.id) { continue }
            last = (record.milliseconds, record.id)
            try body(record.text)
        }
        held.removeAll()
        for run in runs { try? FileManager.default.removeItem(at: run) }
        runs.removeAll()
    }

    /// Sorts by key; stable, so of equal keys the first added comes first.
    private func sortHeld() {
        held = held.enumerated().sorted {
            $0.element < $1.element || (!($1.element < $0.element) && $0.offset < $1.offset)
        }.map(\.element)
    }

    private func spill() throws {
        sortHeld()
        // A name of its own: tests look for the Timeline reader's spool files by theirs.
        let url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "fencepost-sorted-\(UUID().uuidString).bin")
        var bytes: [UInt8] = []
        for record in held where !discarded.contains(record.input) {
            RunReader.append(record, to: &bytes)
        }
        try Data(bytes).write(to: url)
        runs.append(url)
        held.removeAll(keepingCapacity: true)
    }

    /// One spilled run, read back a block at a time. Each record: milliseconds and input as 8
    /// bytes each, then the id and the text, each as a 4-byte length and its UTF-8 bytes.
    private struct RunReader {
        private let handle: FileHandle
        private var buffer: [UInt8] = []
        private var position = 0
        private(set) var current: Record?

        init(url: URL) throws {
            handle = try FileHandle(forReadingFrom: url)
            try advance()
        }

        static func append(_ record: Record, to bytes: inout [UInt8]) {
            withUnsafeBytes(of: record.milliseconds.littleEndian) { bytes.append(contentsOf: $0) }
            withUnsafeBytes(of: Int64(record.input).littleEndian) { bytes.append(contentsOf: $0) }
            for text in [record.id, record.text] {
                withUnsafeBytes(of: UInt32(text.utf8.count).littleEndian) { bytes.append(contentsOf: $0) }
                bytes.append(contentsOf: text.utf8)
            }
        }

        mutating func advance() throws {
            guard try ensure(16) else {
                current = nil
                try? handle.close()
                return
            }
            let milliseconds = integer(Int64.self)
            let input = Int(integer(Int64.self))
            let id = try string()
            let text = try string()
            current = Record(milliseconds: milliseconds, id: id, input: input, text: text)
        }

        private mutating func string() throws -> String {
            guard try ensure(4) else { throw CocoaError(.fileReadCorruptFile) }
            let count = Int(integer(UInt32.self))
            guard try ensure(count) else { throw CocoaError(.fileReadCorruptFile) }
            defer { position += count }
            return String(decoding: buffer[position..<(position + count)], as: UTF8.self)
        }

        private mutating func integer<T: FixedWidthInteger>(_: T.Type) -> T {
            var value = T.zero
            withUnsafeMutableBytes(of: &value) { raw in
                for index in 0..<MemoryLayout<T>.size { raw[index] = buffer[position + index] }
            }
            position += MemoryLayout<T>.size
            return T(littleEndian: value)
        }

        /// Makes `count` unread bytes available; false at the end of the run.
        private mutating func ensure(_ count: Int) throws -> Bool {
            while buffer.count - position < count {
                let chunk = try handle.read(upToCount: 1 << 16) ?? Data()
                guard !chunk.isEmpty else { return false }
                buffer.removeFirst(position)
                position = 0
                buffer.append(contentsOf: chunk)
            }
            return true
        }
    }
}
