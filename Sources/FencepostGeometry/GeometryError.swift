/// A failure inside the geometry layer.
public enum GeometryError: Error, Equatable, CustomStringConvertible {
    /// GEOS refused an operation; `message` is GEOS's own explanation.
    case geosFailure(operation: String, message: String)
    /// The coordinates cannot form the requested geometry (too few positions, empty parts).
    case malformedCoordinates(String)

    public var description: String {
        switch self {
        case .geosFailure(let operation, let message):
            return "GEOS \(operation) failed: \(message)"
        case .malformedCoordinates(let reason):
            return "malformed coordinates: \(reason)"
        }
    }
}
