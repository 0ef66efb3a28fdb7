import FencepostCore
import FencepostFormats

/// The trace readers of `fencepost ingest` and `scan`, one target per format, and one with
/// the format detected from the content (gzip-compressed or not).
enum TraceTargets {
    static let all: [FuzzTarget] =
        [FuzzTarget("trace", "TraceOpener: format detection, gzip, then the detected reader") { read($0, format: nil) }]
        + TraceFormat.allCases.map { format in
            FuzzTarget("trace-\(format.rawValue)", "the \(format.rawValue) trace reader") { read($0, format: format) }
        }

    /// Reads every fix of `bytes` as a file of `format`, handed over in small chunks of a size
    /// that varies with the input, so record boundaries fall across chunks as in a large file.
    static func read(_ bytes: [UInt8], format: TraceFormat?) -> FuzzOutcome {
        let source = chunkedSource(bytes)
        do {
            var reader = try TraceOpener.open(source, format: format, device: nil)
            var count = 0
            while let fix = try reader.next() {
                if fix.device.isEmpty { violated("a fix without a device") }
                count += 1
            }
            return .accepted(count)
        } catch {
            return .refused
        }
    }

    static func chunkedSource(_ bytes: [UInt8]) -> ByteSource {
        let size = 1 + bytes.count % 97
        var offset = 0
        return ByteSource(name: "fuzz-input", size: bytes.count) { () throws(TraceReadError) -> [UInt8]? in
            guard offset < bytes.count else { return nil }
            defer { offset += size }
            return Array(bytes[offset..<min(offset + size, bytes.count)])
        }
    }
}
