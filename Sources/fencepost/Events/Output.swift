import ArgumentParser
import FencepostFormats
import FencepostStore
import Foundation

/// `--format table|json`, for commands that print a small report.
enum TableOrJSON: String, ExpressibleByArgument, CaseIterable {
    case table, json
}

/// Buffered output to stdout or a file (written whole, then renamed into place).
struct OutputSink: TextSink {
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
