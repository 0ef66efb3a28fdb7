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

    package var description: String {
        switch self {
        case .unsupportedURL(let reason):
            return "unsupported store location: \(reason)"
        case .newerSchema(let migrations):
            return
                "the store was upgraded by a newer fencepost (migrations \(migrations.joined(separator: ", "))): use that release or newer"
        case .unreachable(let reason):
            return reason
        }
    }
}

/// The store cannot take a write for a reason outside it; nothing of the failed write was
/// stored, and what was committed before is intact. A command exits 3 with this one-line
/// reason; the service answers 503.
package enum StoreBlocked: Error, Equatable, CustomStringConvertible {
    /// No space left on the disk holding the store (SQLite's "database or disk is full", or
    /// the I/O errors a full disk gives when the log or its shared memory must grow).
    case diskFull(path: String, freeBytes: Int64?)
    /// Another process held the store's write lock for longer than the busy timeout.
    case locked(path: String, holder: String?, waitedSeconds: Double)

    package var description: String {
        switch self {
        case .diskFull(let path, let free):
            let space = free.map { " (\($0) bytes free)" } ?? ""
            return "disk full: no space left on the disk holding \(path)\(space); nothing of this write was stored "
                + "and what was committed before is intact: free some space and run it again"
        case .locked(let path, let holder, let waited):
            let who = holder.map { "by \($0)" } ?? "by another process"
            return "the store \(path) is locked \(who): still held after waiting \(String(format: "%g", waited)) s "
                + "(--busy-timeout); nothing of this write was stored: run it again when that process is done"
        }
    }
}
