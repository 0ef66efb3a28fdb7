/// A store whose contents cannot be used as they are.
public enum StoreError: Error, Equatable, CustomStringConvertible {
    /// A stored region no longer parses: the database was edited by hand or by a newer version.
    case corruptRegion(id: String, issues: [String])
    /// A token with this name already exists.
    case tokenExists(String)

    public var description: String {
        switch self {
        case .corruptRegion(let id, let issues):
            return "stored region \(id) cannot be read: \(issues.joined(separator: "; "))"
        case .tokenExists(let name):
            return "a token named \(name) already exists"
        }
    }
}

/// Why a store could not be opened: a one-line reason for the user (exit code 3).
public enum StoreOpenError: Error, Equatable, CustomStringConvertible {
    /// `--db` names something that is neither a file path nor a PostgreSQL URL.
    case unsupportedURL(String)
    /// The database was migrated by a newer release (the migrations it has that this one does not know).
    case newerSchema([String])
    /// The server could not be reached, or refused the connection or the login.
    case unreachable(String)

    public var description: String {
        switch self {
        case .unsupportedURL(let reason):
            return "unsupported store location: \(reason)"
        case .newerSchema(let migrations):
            return "the store was upgraded by a newer fencepost (migrations \(migrations.joined(separator: ", "))): use that release or newer"
        case .unreachable(let reason):
            return reason
        }
    }
}
