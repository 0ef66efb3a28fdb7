/// One problem in a region config, located by file and feature.
public struct RegionConfigIssue: Sendable, Equatable, CustomStringConvertible {
    /// The file as the user named it.
    public var file: String
    /// The feature's index in the file's `features` array, when the problem is in a feature.
    public var featureIndex: Int?
    /// The feature's id, when it has one.
    public var featureID: String?
    public var problem: RegionConfigProblem

    public init(file: String, featureIndex: Int? = nil, featureID: String? = nil, problem: RegionConfigProblem) {
        self.file = file
        self.featureIndex = featureIndex
        self.featureID = featureID
        self.problem = problem
    }

    /// `file: feature 3 (id "home"): reason`
    public var description: String {
        var where_ = file
        if let featureIndex {
            where_ += ": feature \(featureIndex)"
            if let featureID { where_ += " (id \"\(featureID)\")" }
        }
        return "\(where_): \(problem)"
    }
}

/// Why a region config is refused. `code` is stable for scripts; the description is for people.
public enum RegionConfigProblem: Sendable, Equatable, CustomStringConvertible {
    case unreadable(String)
    case invalidJSON(JSONSyntaxError)
    case notFeatureCollection(found: String)
    case projectedCRS(String)
    case malformedFeature(String)
    case missingID
    case invalidID(String)
    case duplicateID(String, otherFile: String, otherFeatureIndex: Int)
    case unsupportedGeometry(String)
    case missingRadius
    case nonPositiveRadius(Double)
    case malformedCoordinates(String)
    case coordinateOutOfRange(lon: Double, lat: Double, hint: CoordinateHint?)
    case unclosedRing(ring: Int)
    case tooFewPositions(ring: Int, count: Int)
    case invalidGeometry(reason: String, location: String?)
    case invalidProperty(name: String, reason: String)

    /// What an out-of-range coordinate most likely is.
    public enum CoordinateHint: Sendable, Equatable {
        /// Metres of a projected system (UTM, a national grid).
        case projected
        /// Latitude and longitude in the wrong order.
        case swapped
    }

    public var code: String {
        switch self {
        case .unreadable: return "unreadable"
        case .invalidJSON: return "invalid_json"
        case .notFeatureCollection: return "not_feature_collection"
        case .projectedCRS: return "projected_crs"
        case .malformedFeature: return "malformed_feature"
        case .missingID: return "missing_id"
        case .invalidID: return "invalid_id"
        case .duplicateID: return "duplicate_id"
        case .unsupportedGeometry: return "unsupported_geometry"
        case .missingRadius: return "missing_radius"
        case .nonPositiveRadius: return "non_positive_radius"
        case .malformedCoordinates: return "malformed_coordinates"
        case .coordinateOutOfRange: return "coordinate_out_of_range"
        case .unclosedRing: return "unclosed_ring"
        case .tooFewPositions: return "too_few_positions"
        case .invalidGeometry: return "invalid_geometry"
        case .invalidProperty: return "invalid_property"
        }
    }

    public var description: String {
        switch self {
        case .unreadable(let reason):
            return "cannot read: \(reason)"
        case .invalidJSON(let error):
            return "invalid JSON at \(error)"
        case .notFeatureCollection(let found):
            return "expected a GeoJSON FeatureCollection, found \(found)"
        case .projectedCRS(let crs):
            return "declares the coordinate system \(crs): looks projected, convert to WGS84 lon/lat (RFC 7946)"
        case .malformedFeature(let reason):
            return "malformed feature: \(reason)"
        case .missingID:
            return "missing id: set properties.id (or the feature's id)"
        case .invalidID(let id):
            return "invalid id \"\(id)\": use only letters, digits and . _ : -"
        case .duplicateID(let id, let otherFile, let otherIndex):
            return "duplicate id \"\(id)\": also used by \(otherFile) feature \(otherIndex)"
        case .unsupportedGeometry(let type):
            return "unsupported geometry type \(type): use Point with a radius, Polygon or MultiPolygon"
        case .missingRadius:
            return "a Point region needs properties.radius in metres"
        case .nonPositiveRadius(let radius):
            return "radius must be greater than 0 metres, got \(radius)"
        case .malformedCoordinates(let reason):
            return "malformed coordinates: \(reason)"
        case .coordinateOutOfRange(let lon, let lat, let hint):
            let base = "coordinate [\(lon), \(lat)] is out of range (lon -180...180, lat -90...90)"
            switch hint {
            case .projected?: return base + ": looks projected, convert to WGS84 lon/lat"
            case .swapped?: return base + ": looks like [lat, lon]; GeoJSON wants [lon, lat]"
            case nil: return base
            }
        case .unclosedRing(let ring):
            return "ring \(ring) is not closed: its last position must equal its first"
        case .tooFewPositions(let ring, let count):
            return "ring \(ring) has \(count) positions, a closed ring needs at least 4"
        case .invalidGeometry(let reason, let location):
            return "invalid geometry: \(reason)" + (location.map { " at \($0)" } ?? "")
        case .invalidProperty(let name, let reason):
            return "property \(name): \(reason)"
        }
    }
}

/// A region config that was refused whole, with every problem found.
public struct RegionConfigError: Error, Sendable, Equatable, CustomStringConvertible {
    public var issues: [RegionConfigIssue]

    public init(issues: [RegionConfigIssue]) {
        self.issues = issues
    }

    public var description: String {
        issues.map(\.description).joined(separator: "\n")
    }
}
