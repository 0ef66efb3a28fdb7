/// A store whose contents cannot be used as they are.
public enum StoreError: Error, Equatable, CustomStringConvertible {
    /// A stored region no longer parses: the database was edited by hand or by a newer version.
    case corruptRegion(id: String, issues: [String])

    public var description: String {
        switch self {
        case .corruptRegion(let id, let issues):
            return "stored region \(id) cannot be read: \(issues.joined(separator: "; "))"
        }
    }
}
