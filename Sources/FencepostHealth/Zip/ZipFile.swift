import FencepostFormats

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// An archive file opened for positional reads (`pread`): every read names its offset, so the
/// readers of several entries of one archive never share a cursor, and the size, taken once
/// on opening, is what every offset and length the archive's records claim is checked against.
final class ZipFile {
    let path: String
    /// The file's real size in bytes: nothing is ever read past it.
    let size: UInt64
    private let descriptor: Int32

    init(path: String) throws(TraceReadError) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw TraceReadError(
                file: path, line: nil, reason: "cannot be opened for reading: \(Self.message(errno))", unreadable: true)
        }
        let end = lseek(descriptor, 0, SEEK_END)
        guard end >= 0 else {
            let code = errno
            close(descriptor)
            throw TraceReadError(file: path, line: nil, reason: "cannot find its size: \(Self.message(code))")
        }
        self.path = path
        self.size = UInt64(end)
        self.descriptor = descriptor
    }

    deinit {
        close(descriptor)
    }

    /// Whether `count` bytes from `offset` lie inside the file (checked without overflowing,
    /// whatever 64-bit values a damaged record holds).
    func holds(_ count: UInt64, at offset: UInt64) -> Bool {
        count <= size && offset <= size - count
    }

    /// Exactly `count` bytes from `offset`, which the caller has checked lie in the file; `name`
    /// is what a failure blames (the archive, or `archive.zip:entry`).
    func read(_ count: Int, at offset: UInt64, for name: String) throws(TraceReadError) -> [UInt8] {
        precondition(count >= 0 && holds(UInt64(count), at: offset), "read outside the archive")
        var bytes = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let got = bytes.withUnsafeMutableBytes { buffer in
                pread(descriptor, buffer.baseAddress! + done, count - done, off_t(offset + UInt64(done)))
            }
            if got < 0 {
                let code = errno
                if code == EINTR { continue }
                throw TraceReadError(file: name, line: nil, reason: "read failed: \(Self.message(code))")
            }
            // The size was taken on opening: a file that shrank since is refused, not waited for.
            guard got > 0 else {
                throw TraceReadError(
                    file: name, line: nil,
                    reason: "the archive ended at byte \(offset + UInt64(done)) (it was \(size) bytes when opened)")
            }
            done += got
        }
        return bytes
    }

    private static func message(_ code: Int32) -> String {
        String(cString: strerror(code))
    }
}
