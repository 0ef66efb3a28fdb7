import ArgumentParser
import FencepostFormats
import FencepostStore
import Foundation

/// `--format table|json`, for commands that print a small report.
enum TableOrJSON: String, ExpressibleByArgument, CaseIterable {
    case table, json
}

/// Buffered output to stdout or a file: a regular file is written whole beside its place, then
/// renamed into it (a failed run leaves no half-written file); anything else that already
/// exists there (`/dev/null`, a pipe, a terminal) is written to as it is.
struct OutputSink: TextSink {
    private var buffer: [UInt8] = []
    private let handle: FileHandle
    private let path: String?
    private let temporary: String?

    init(path: String?) throws {
        if let path { try Self.checkWritable(path) }
        if let path, !Self.isRegularFileOrAbsent(path) {
            guard let handle = FileHandle(forWritingAtPath: path) else {
                throw CommandFailure.io("error: cannot write \(path)")
            }
            self.handle = handle
            self.path = nil
            temporary = nil
        } else if let path {
            let temporary = path + ".partial"
            guard FileManager.default.createFile(atPath: temporary, contents: nil),
                let handle = FileHandle(forWritingAtPath: temporary)
            else {
                throw CommandFailure.io("error: cannot write \(path)")
            }
            self.handle = handle
            self.path = path
            self.temporary = temporary
        } else {
            handle = FileHandle.standardOutput
            self.path = nil
            temporary = nil
        }
    }

    private static func isRegularFileOrAbsent(_ path: String) -> Bool {
        var status = stat()
        guard stat(path, &status) == 0 else { return true }
        return status.st_mode & S_IFMT == S_IFREG
    }

    mutating func write(_ text: String) throws {
        buffer.append(contentsOf: text.utf8)
        if buffer.count >= 1 << 16 { try flush() }
    }

    /// Writes what is held. A reader that went away (`| head`) ends the command quietly, with
    /// the status a process stopped by SIGPIPE has (141): the shell's way, where SIGPIPE is
    /// ignored (as it is once the PostgreSQL client has started) and the write fails instead.
    mutating func flush() throws {
        guard !buffer.isEmpty else { return }
        let failure = buffer.withUnsafeBytes { Self.writeAll($0, to: handle.fileDescriptor) }
        if failure == EPIPE { throw ExitCode(128 + SIGPIPE) }
        if failure != 0 { throw CommandFailure.io("error: write failed: \(InputFile.reason(failure))") }
        buffer.removeAll(keepingCapacity: true)
    }

    /// Writes `bytes` whole (a pipe may take part of them at a time); returns the `errno` of a
    /// failed write, or 0.
    private static func writeAll(_ bytes: UnsafeRawBufferPointer, to descriptor: Int32) -> Int32 {
        guard let base = bytes.baseAddress else { return 0 }
        var offset = 0
        while offset < bytes.count {
            let written = Glibc.write(descriptor, base + offset, bytes.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                return errno
            }
            offset += written
        }
        return 0
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

extension OutputSink {
    /// Refuses, with the reason, an output path that cannot be a file: one in a folder that does
    /// not exist (a typo; folders are not made on the way), or a folder itself.
    static func checkWritable(_ path: String) throws {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
            throw CommandFailure.io("error: cannot write \(path): it is a directory")
        }
        if let problem = folderProblem(of: path) { throw CommandFailure.io("error: cannot write \(path): \(problem)") }
    }

    /// Why the folder `path` would go in cannot take it (missing, or not a folder), or nil.
    static func folderProblem(of path: String) -> String? {
        let folder = (path as NSString).deletingLastPathComponent
        guard !folder.isEmpty else { return nil }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isDirectory) else {
            return "no such directory \(folder)"
        }
        return isDirectory.boolValue ? nil : "\(folder) is not a directory"
    }
}

extension OutputSink {
    /// Writes `text` whole to `path` (through a temporary file renamed into place).
    static func writeWhole(_ text: String, to path: String) throws {
        var sink = try OutputSink(path: path)
        try sink.write(text)
        try sink.close()
    }
}
