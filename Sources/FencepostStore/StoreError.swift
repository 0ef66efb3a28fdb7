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
