import Foundation
import Synchronization

/// Reads a file (or standard input for `-`, or any other producer of chunks, such as an entry of
/// a zip archive) in fixed-size chunks: the only way inputs are read, so memory stays flat
/// whatever the input's size.
///
/// `@unchecked Sendable`: chunks are read by one thread at a time (a reader may be handed to a
/// prefetching thread); `bytesRead` is atomic and `size` immutable, so another thread can watch
/// the progress.
package final class ByteSource: @unchecked Sendable {
    package let name: String
    /// The next raw chunk, nil at the end.
    private let nextChunk: () throws(TraceReadError) -> [UInt8]?
    /// Bytes of the file read so far (compressed bytes for gzip), for progress reports.
    package var bytesRead: Int { counter.load(ordering: .relaxed) }
    private let counter = Atomic<Int>(0)
    /// The input's size in bytes, when known (a regular file's).
    package let size: Int?

    /// Reads chunks from a producer; `name` is what errors and progress call the input.
    package init(name: String, size: Int?, chunks: @escaping () throws(TraceReadError) -> [UInt8]?) {
        self.name = name
        self.size = size
        self.nextChunk = chunks
    }

    /// Reads bytes already in memory (a small file taken out of an archive).
    package convenience init(name: String, bytes: [UInt8]) {
        var remaining: [UInt8]? = bytes
        self.init(name: name, size: bytes.count) { () throws(TraceReadError) -> [UInt8]? in
            defer { remaining = nil }
            return remaining
        }
    }

    package convenience init(path: String, chunkSize: Int = 1 << 18) throws(TraceReadError) {
        let size = path == "-" ? nil : (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? nil
        let file: FileChunks
        if path == "-" {
            file = FileChunks(name: path, handle: FileHandle.standardInput, owned: false, chunkSize: chunkSize)
        } else {
            file = FileChunks(name: path, handle: try InputFile.open(path), owned: true, chunkSize: chunkSize)
        }
        self.init(name: path, size: size) { () throws(TraceReadError) -> [UInt8]? in try file.read() }
    }

    private var peeked: [UInt8]?
    /// Set when the input turns out to be gzip-compressed: every chunk passes through it.
    private var inflater: GzipInflater?
    private var checkedCompression = false

    /// The first bytes of the input, without consuming them (for format detection).
    package func peek() throws(TraceReadError) -> [UInt8] {
        if let peeked { return peeked }
        let first = try read() ?? []
        peeked = first
        return first
    }

    /// The next chunk, or nil at the end of the input (decompressed when the input is gzip).
    package func read() throws(TraceReadError) -> [UInt8]? {
        if let chunk = peeked {
            peeked = nil
            return chunk.isEmpty ? nil : chunk
        }
        while true {
            guard let raw = try readRaw() else {
                if let inflater, !inflater.isComplete {
                    throw TraceReadError(file: name, line: nil, reason: "truncated gzip data")
                }
                return nil
            }
            if !checkedCompression {
                checkedCompression = true
                if raw.count >= 2, raw[0] == 0x1F, raw[1] == 0x8B { inflater = try GzipInflater(name: name) }
            }
            guard let inflater else { return raw }
            let inflated = try inflater.inflate(raw)
            if !inflated.isEmpty { return inflated }
        }
    }

    private func readRaw() throws(TraceReadError) -> [UInt8]? {
        guard let chunk = try nextChunk(), !chunk.isEmpty else { return nil }
        counter.add(chunk.count, ordering: .relaxed)
        return chunk
    }
}

/// A file handle read in fixed-size chunks, closed with its owner.
private final class FileChunks {
    private let name: String
    private let handle: FileHandle
    private let owned: Bool
    private let chunkSize: Int

    init(name: String, handle: FileHandle, owned: Bool, chunkSize: Int) {
        self.name = name
        self.handle = handle
        self.owned = owned
        self.chunkSize = chunkSize
    }

    deinit {
        if owned { try? handle.close() }
    }

    func read() throws(TraceReadError) -> [UInt8]? {
        try InputFile.chunk(of: handle.fileDescriptor, upTo: chunkSize, name: name)
    }
}

/// A malformed or unreadable trace: where, and why. Nothing of the input is written.
package struct TraceReadError: Error, Sendable, Equatable, CustomStringConvertible {
    package var file: String
    package var line: Int?
    package var reason: String
    /// The file could not be opened or read at all (missing, a directory, no permission): a
    /// command exits 3 for it, not 1 as for a file whose content is refused.
    package var unreadable: Bool

    package init(file: String, line: Int?, reason: String, unreadable: Bool = false) {
        self.file = file
        self.line = line
        self.reason = reason
        self.unreadable = unreadable
    }

    package var description: String {
        "\(file)" + (line.map { ":\($0)" } ?? "") + ": \(reason)"
    }
}
