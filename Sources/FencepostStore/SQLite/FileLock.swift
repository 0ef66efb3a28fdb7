#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// An exclusive `flock` on a file beside a SQLite store, held while this value lives; the
/// kernel drops it with the process, so a killed holder never leaves a stale lock behind.
final class FileLock: Sendable {
    private let descriptor: Int32

    private init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    deinit {
        flock(descriptor, LOCK_UN)
        close(descriptor)
    }

    /// Takes the lock on `path`, waiting for it when `wait`; nil when another process holds it
    /// and not `wait`.
    static func acquire(_ path: String, wait: Bool) throws -> FileLock? {
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw FileLockError(path: path, errno: errno) }
        if flock(descriptor, LOCK_EX | (wait ? 0 : LOCK_NB)) != 0 {
            let code = errno
            close(descriptor)
            if code == EWOULDBLOCK { return nil }
            throw FileLockError(path: path, errno: code)
        }
        return FileLock(descriptor: descriptor)
    }
}

struct FileLockError: Error, CustomStringConvertible {
    var path: String
    var errno: Int32
    var description: String { "cannot lock \(path): \(String(cString: strerror(errno)))" }
}
