#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One sync at a time per store: an exclusive `flock` on `<store>.sync-lock`, released when
/// this value is released or the process dies (the kernel drops the lock with the process,
/// so a killed sync never leaves a stale lock behind).
public final class SyncLock: Sendable {
    private let descriptor: Int32

    private init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    deinit {
        guard descriptor >= 0 else { return }
        flock(descriptor, LOCK_UN)
        close(descriptor)
    }

    /// Takes the lock, waiting for it when `wait`; nil when another sync holds it and not `wait`.
    /// An in-memory store (no path) cannot be shared between processes and needs no lock.
    public static func acquire(storePath: String, wait: Bool) throws -> SyncLock? {
        if storePath.isEmpty || storePath == ":memory:" { return SyncLock(descriptor: -1) }
        let path = storePath + ".sync-lock"
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw SyncLockError(path: path, errno: errno) }
        if flock(descriptor, LOCK_EX | (wait ? 0 : LOCK_NB)) != 0 {
            let code = errno
            close(descriptor)
            if code == EWOULDBLOCK { return nil }
            throw SyncLockError(path: path, errno: code)
        }
        return SyncLock(descriptor: descriptor)
    }
}

public struct SyncLockError: Error, CustomStringConvertible {
    public var path: String
    public var errno: Int32
    public var description: String { "cannot lock \(path): \(String(cString: strerror(errno)))" }
}
