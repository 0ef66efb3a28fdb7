import Foundation

/// Buffered output to stdout or a file (written whole, then renamed into place).
struct OutputSink {
    private var buffer: [UInt8] = []
    private let handle: FileHandle
    private let path: String?
    private let temporary: String?

    init(path: String?) throws {
        self.path = path
        if let path {
            let temporary = path + ".partial"
            guard FileManager.default.createFile(atPath: temporary, contents: nil), let handle = FileHandle(forWritingAtPath: temporary) else {
                throw CommandFailure.io("error: cannot write \(path)")
            }
            self.handle = handle
            self.temporary = temporary
        } else {
            handle = FileHandle.standardOutput
            temporary = nil
        }
    }

    mutating func write(_ text: String) throws {
        buffer.append(contentsOf: text.utf8)
        if buffer.count >= 1 << 16 { try flush() }
    }

    mutating func flush() throws {
        guard !buffer.isEmpty else { return }
        do {
            try handle.write(contentsOf: buffer)
        } catch {
            throw CommandFailure.io("error: write failed: \(error.localizedDescription)")
        }
        buffer.removeAll(keepingCapacity: true)
    }

    mutating func close() throws {
        try flush()
        guard let path, let temporary else { return }
        try? handle.close()
        do {
            if FileManager.default.fileExists(atPath: path) { try FileManager.default.removeItem(atPath: path) }
            try FileManager.default.moveItem(atPath: temporary, toPath: path)
        } catch {
            throw CommandFailure.io("error: cannot write \(path): \(error.localizedDescription)")
        }
    }
}

enum CSV {
    /// A field quoted when it holds a comma, quote or line break.
    static func field(_ text: String) -> String {
        guard text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return text }
        return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}

enum LocalTime {
    /// RFC 3339 local time with the zone's offset at that instant: `2025-06-01T08:04:52.350+02:00`.
    static func format(milliseconds: Int64, in zone: TimeZone) -> String {
        let date = Date(timeIntervalSince1970: Double(milliseconds) / 1000)
        let offset = zone.secondsFromGMT(for: date)
        let utc = Timestamp.format(milliseconds: milliseconds + Int64(offset) * 1000)
        let sign = offset < 0 ? "-" : "+"
        let hours = abs(offset) / 3600, minutes = abs(offset) % 3600 / 60
        return utc.dropLast() + sign + (hours < 10 ? "0" : "") + "\(hours):" + (minutes < 10 ? "0" : "") + "\(minutes)"
    }
}

import FencepostCore
