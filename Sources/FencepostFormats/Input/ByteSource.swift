import Foundation
import Synchronization

/// Reads a file (or standard input for `-`) in fixed-size chunks: the only way inputs are read,
/// so memory stays flat whatever the file size.
///
/// `@unchecked Sendable`: chunks are read by one thread at a time (a reader may be handed to a
/// prefetching thread); `bytesRead` is atomic and `size` immutable, so another thread can watch
/// the progress.
public final class ByteSource: @unchecked Sendable {
    public let name: String
    private let handle: FileHandle
    private let ownsHandle: Bool
    private let chunkSize: Int
    /// Bytes of the file read so far (compressed bytes for gzip), for progress reports.
    public var bytesRead: Int { counter.load(ordering: .relaxed) }
    private let counter = Atomic<Int>(0)
    /// The file's size, when it is a regular file.
    public let size: Int?

    public init(path: String, chunkSize: Int = 1 << 18) throws(TraceReadError) {
        self.name = path
        self.chunkSize = chunkSize
        size = path == "-" ? nil : (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? nil
        if path == "-" {
            handle = FileHandle.standardInput
            ownsHandle = false
        } else {
            guard let handle = FileHandle(forReadingAtPath: path) else {
                let reason = FileManager.default.fileExists(atPath: path) ? "cannot be opened for reading" : "no such file"
                throw TraceReadError(file: path, line: nil, reason: reason)
            }
            self.handle = handle
            ownsHandle = true
        }
    }

    deinit {
        if ownsHandle { try? handle.close() }
    }

    private var peeked: [UInt8]?
    /// Set when the input turns out to be gzip-compressed: every chunk passes through it.
    private var inflater: GzipInflater?
    private var checkedCompression = false

    /// The first bytes of the input, without consuming them (for format detection).
    public func peek() throws(TraceReadError) -> [UInt8] {
        if let peeked { return peeked }
        let first = try read() ?? []
        peeked = first
        return first
    }

    /// The next chunk, or nil at the end of the input (decompressed when the input is gzip).
    public func read() throws(TraceReadError) -> [UInt8]? {
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
        let data: Data?
        do {
            data = try handle.read(upToCount: chunkSize)
        } catch {
            throw TraceReadError(file: name, line: nil, reason: "read failed: \(error.localizedDescription)")
        }
        guard let data, !data.isEmpty else { return nil }
        counter.add(data.count, ordering: .relaxed)
        return [UInt8](data)
    }
}

/// A malformed or unreadable trace: where, and why. Nothing of the input is written.
public struct TraceReadError: Error, Sendable, Equatable, CustomStringConvertible {
    public var file: String
    public var line: Int?
    public var reason: String

    public init(file: String, line: Int?, reason: String) {
        self.file = file
        self.line = line
        self.reason = reason
    }

    public var description: String {
        "\(file)" + (line.map { ":\($0)" } ?? "") + ": \(reason)"
    }
}
