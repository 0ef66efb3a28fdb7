/// A WGS84 position in GeoJSON order: longitude first.
public struct Position: Sendable, Hashable, Codable {
    public var lon: Double
    public var lat: Double

    public init(lon: Double, lat: Double) {
        self.lon = lon
        self.lat = lat
    }
}

/// A polygon as GeoJSON writes it: the exterior ring first, then holes; rings closed.
public struct PolygonCoordinates: Sendable, Hashable {
    public var rings: [[Position]]

    public init(rings: [[Position]]) {
        self.rings = rings
    }

    public var exterior: [Position] { rings.first ?? [] }
    public var holes: ArraySlice<[Position]> { rings.dropFirst() }
}

/// A plain-Swift geometry: what region configs and the store carry, convertible to and from GEOS.
public enum Shape: Sendable, Hashable {
    case point(Position)
    /// A line through the positions in order (a corridor's centre line).
    case lineString([Position])
    case polygon(PolygonCoordinates)
    case multiPolygon([PolygonCoordinates])

    /// The GeoJSON `type` member for this shape.
    public var geoJSONType: String {
        switch self {
        case .point: return "Point"
        case .lineString: return "LineString"
        case .polygon: return "Polygon"
        case .multiPolygon: return "MultiPolygon"
        }
    }

    /// Every position of the shape, in order.
    public var positions: [Position] {
        switch self {
        case .point(let position): return [position]
        case .lineString(let positions): return positions
        case .polygon, .multiPolygon: return rings.flatMap { $0 }
        }
    }

    /// The rings of a polygon, or of every polygon of a multipolygon in turn; none for a point.
    public var rings: [[Position]] {
        switch self {
        case .point, .lineString: return []
        case .polygon(let polygon): return polygon.rings
        case .multiPolygon(let polygons): return polygons.flatMap(\.rings)
        }
    }

    /// The bounding box of the shape's positions.
    public var bounds: Envelope {
        Envelope(covering: positions)
    }
}

/// An axis-aligned box in lon/lat (or projected x/y) coordinates.
public struct Envelope: Sendable, Hashable {
    public var minX: Double
    public var minY: Double
    public var maxX: Double
    public var maxY: Double

    public init(minX: Double, minY: Double, maxX: Double, maxY: Double) {
        self.minX = minX
        self.minY = minY
        self.maxX = maxX
        self.maxY = maxY
    }

    /// The smallest envelope holding every position; a degenerate box at (0, 0) when empty.
    public init(covering positions: [Position]) {
        guard let first = positions.first else {
            self.init(minX: 0, minY: 0, maxX: 0, maxY: 0)
            return
        }
        var box = Envelope(minX: first.lon, minY: first.lat, maxX: first.lon, maxY: first.lat)
        for position in positions.dropFirst() {
            box.minX = min(box.minX, position.lon)
            box.maxX = max(box.maxX, position.lon)
            box.minY = min(box.minY, position.lat)
            box.maxY = max(box.maxY, position.lat)
        }
        self = box
    }

    /// The box of the segment a → b, without an array (for per-fix use).
    public init(spanning a: Position, _ b: Position) {
        self.init(minX: min(a.lon, b.lon), minY: min(a.lat, b.lat), maxX: max(a.lon, b.lon), maxY: max(a.lat, b.lat))
    }

    /// The smallest box holding both.
    public func union(_ other: Envelope) -> Envelope {
        Envelope(
            minX: min(minX, other.minX), minY: min(minY, other.minY), maxX: max(maxX, other.maxX),
            maxY: max(maxY, other.maxY))
    }

    /// The box grown by `dx` horizontally and `dy` vertically on every side.
    public func expanded(dx: Double, dy: Double) -> Envelope {
        Envelope(minX: minX - dx, minY: minY - dy, maxX: maxX + dx, maxY: maxY + dy)
    }

    public func contains(x: Double, y: Double) -> Bool {
        x >= minX && x <= maxX && y >= minY && y <= maxY
    }

    public func intersects(_ other: Envelope) -> Bool {
        minX <= other.maxX && other.minX <= maxX && minY <= other.maxY && other.minY <= maxY
    }
}
