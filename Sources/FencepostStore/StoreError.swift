import Foundation

/// A store whose contents cannot be used as they are.
package enum StoreError: Error, Equatable, CustomStringConvertible {
    /// A stored region no longer parses: the database was edited by hand or by a newer version.
    case corruptRegion(id: String, issues: [String])
    /// A token with this name already exists.
    case tokenExists(String)

    package var description: String {
        switch self {
        case .corruptRegion(let id, let issues):
            return "stored region \(id) cannot be read: \(issues.joined(separator: "; "))"
        case .tokenExists(let name):
            return "a token named \(name) already exists"
        }
    }
}

/// Why a store could not be opened: a one-line reason for the user (exit code 3).
package enum StoreOpenError: Error, Equatable, CustomStringConvertible {
    /// `--db` names something that is neither a file path nor a PostgreSQL URL.
    case unsupportedURL(String)
    /// The database was migrated by a newer release (the migrations it has that this one does not know).
    case newerSchema([String])
    /// The server could not be reached, or refused the connection or the login.
    case unreachable(String)
    /// No store at this path, and it was not to be created (a command that only reads).
    case missing(path: String)

    package var description: String {
        switch self {
        case .unsupportedURL(let reason):
            return "unsupported store location: \(reason)"
        case .newerSchema(let migrations):
            return
                "the store was upgraded by a newer fencepost (migrations \(migrations.joined(separator: ", "))): use that release or newer"
        case .unreachable(let reason):
            return reason
        case .missing(let path):
            return "no store at \(path)"
        }
    }
}

/// The store cannot take a write now, for a reason outside it: the one error for "try again
/// later", whatever the backend. Nothing of the failed write was stored, and what was committed
/// before is intact. A command exits 3 with this one-line reason; the service answers 503 with
/// `Retry-After`.
package struct StoreUnavailable: Error, Equatable, CustomStringConvertible {
    package enum Cause: Equatable, Sendable {
        /// No space left on the disk holding the store (SQLite's "database or disk is full",
        /// or the I/O errors a full disk gives when the log or its shared memory must grow).
        case diskFull(path: String, freeBytes: Int64?)
        /// Another process held the store's write lock for longer than the busy timeout.
        case locked(path: String, holder: String?, waitedSeconds: Double)
        /// The database server is away: restarting, unreachable, out of connections, or the
        /// connection was lost mid-statement.
        case serverAway(String)
    }

    package var cause: Cause

    package init(_ cause: Cause) {
        self.cause = cause
    }

    /// A server away, for a reason.
    package init(reason: String) {
        self.init(.serverAway(reason))
    }

    /// Seconds after which the write may succeed when tried again.
    package var retryAfterSeconds: Int { 1 }

    /// The error's code in the service's answers.
    package var code: String {
        switch cause {
        case .diskFull: return "disk_full"
        case .locked: return "store_locked"
        case .serverAway: return "store_unavailable"
        }
    }

    package var description: String {
        switch cause {
        case .diskFull(let path, let free):
            let space = free.map { " (\($0) bytes free)" } ?? ""
            return "disk full: no space left on the disk holding \(path)\(space); nothing of this write was stored "
                + "and what was committed before is intact: free some space and run it again"
        case .locked(let path, let holder, let waited):
            let who = holder.map { "by \($0)" } ?? "by another process"
            return "the store \(path) is locked \(who): still held after waiting \(String(format: "%g", waited)) s "
                + "(--busy-timeout); nothing of this write was stored: run it again when that process is done"
        case .serverAway(let reason):
            return reason
        }
    }
}
