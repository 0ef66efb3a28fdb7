import Foundation
import GRDB

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Recognises the SQLite failures that come from outside the store — a full disk, a write lock
/// another process holds — so they reach users as ``StoreUnavailable`` with what to do about
/// them, instead of as SQLite's result codes.
enum SQLiteFailures {
    /// Below this much free space, an I/O error is taken for a full disk: creating or growing
    /// the shared-memory file fails with SQLITE_IOERR rather than SQLITE_FULL.
    static let nearlyFull: Int64 = 1 << 20

    /// `error` as ``StoreUnavailable`` when it is one of those failures, else `error` itself;
    /// `waited` is how long the failed call ran (SQLite gives up on a lock before the busy
    /// timeout when waiting could deadlock).
    static func translate(_ error: any Error, path: String, waited: Double) -> any Error {
        guard let database = error as? DatabaseError else { return error }
        switch database.resultCode {
        case .SQLITE_FULL:
            return StoreUnavailable(.diskFull(path: path, freeBytes: freeBytes(near: path)))
        case .SQLITE_IOERR:
            guard let free = freeBytes(near: path), free < nearlyFull else { return error }
            return StoreUnavailable(.diskFull(path: path, freeBytes: free))
        case .SQLITE_BUSY:
            return StoreUnavailable(
                .locked(path: path, holder: writeLockHolder(of: path), waitedSeconds: (waited * 10).rounded() / 10))
        default:
            return error
        }
    }

    /// Runs `body`, translating what it throws.
    static func translating<T>(path: String, _ body: () throws -> T) throws -> T {
        let started = ContinuousClock.now
        do {
            return try body()
        } catch {
            let waited = started.duration(to: .now)
            throw translate(
                error, path: path,
                waited: Double(waited.components.seconds) + Double(waited.components.attoseconds) / 1e18)
        }
    }

    /// Runs `body` again while it fails on a lock without having waited `timeout` seconds:
    /// opening a new file, SQLite answers "busy" at once rather than wait for another process
    /// that is switching it to WAL or migrating it.
    static func retryingBusy<T>(for timeout: Double, _ body: () throws -> T) throws -> T {
        let deadline = ContinuousClock.now + .milliseconds(Int(timeout * 1000))
        var pause = 0.01
        while true {
            do {
                return try body()
            } catch let error as DatabaseError where error.resultCode == .SQLITE_BUSY && ContinuousClock.now < deadline
            {
                Thread.sleep(forTimeInterval: Double.random(in: pause...(2 * pause)))
                pause = min(pause * 2, 0.2)
            }
        }
    }

    /// Bytes an unprivileged writer may still use on the file system holding `path`.
    static func freeBytes(near path: String) -> Int64? {
        var stats = statvfs()
        let directory = (path as NSString).deletingLastPathComponent
        guard statvfs(directory.isEmpty ? "." : directory, &stats) == 0 else { return nil }
        return Int64(stats.f_bavail) * Int64(stats.f_frsize)
    }

    /// Who holds the store's write lock, for messages: `pid 1234 (fencepost serve …)`.
    static func writeLockHolder(of path: String) -> String? {
        guard let pid = SQLiteWriteLock.holder(of: path) else { return nil }
        guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline"), !data.isEmpty else {
            return "pid \(pid)"
        }
        let words = data.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
        let command = ([(words.first as NSString?)?.lastPathComponent ?? ""] + words.dropFirst()).joined(separator: " ")
        return "pid \(pid) (\(command.count > 120 ? command.prefix(117) + "..." : command))"
    }
}

/// The write lock of a SQLite store in WAL mode: SQLite takes it as a POSIX lock on byte 120 of
/// the `-shm` file, so `F_GETLK` from any process names its holder.
package enum SQLiteWriteLock {
    /// The pid holding the write lock of the store file at `path`, if any.
    package static func holder(of path: String) -> Int32? {
        let descriptor = open(path + "-shm", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var lock = flock()
        lock.l_type = Int16(F_WRLCK)
        lock.l_whence = Int16(SEEK_SET)
        lock.l_start = 120
        lock.l_len = 1
        guard fcntl(descriptor, F_GETLK, &lock) == 0, lock.l_type != Int16(F_UNLCK), lock.l_pid > 0 else { return nil }
        return lock.l_pid
    }
}
