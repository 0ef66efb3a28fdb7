import FencepostGeometry

/// Where a position lies relative to a region: inside or not, and how far from the boundary.
struct AreaLocation {
    var inside: Bool
    /// Metres to the nearest point of the boundary, whether inside or outside.
    var boundaryDistance: Double
}

/// A region's geometry compiled for the monitor: containment, metric distance to the boundary,
/// and where a straight segment crosses the boundary.
///
/// Circles are exact on the sphere (haversine); polygons are planar in lon/lat, with distances in
/// metres through a local projection centred on the region. Small polygons are scanned edge by
/// edge; larger ones use GEOS's prepared geometries, so they hold GEOS state and live on their
/// monitor's thread. One subclass per kind: the per-fix path dispatches once, copying nothing.
class RegionArea {
    let envelope: Envelope
    /// Metres per degree of longitude in the region's own distances (a polygon's projection
    /// has one, from its middle's latitude); 0 for a circle, measured on the sphere. Near the
    /// pole of a large region it exceeds a fix's own: the discs then measure with it.
    let metresPerDegreeLon: Double

    /// Polygons up to this many vertices are tested by a plain scan of their edges, which for
    /// so few edges is several times faster than a GEOS call; larger ones use GEOS's indexes.
    static let smallPolygonLimit = 128

    init(envelope: Envelope, metresPerDegreeLon: Double) {
        self.envelope = envelope
        self.metresPerDegreeLon = metresPerDegreeLon
    }

    static func compile(_ shape: RegionShape, context: GEOSContext) throws -> RegionArea {
        switch shape {
        case .circle(let center, let radius):
            return CircleArea(center: center, radius: radius, envelope: shape.bounds)
        case .corridor(let corridor):
            return try compile(.area(corridor.outline), context: context)
        case .area(let area):
            let rings = area.rings
            let projection = LocalProjection(centredOn: area.bounds)
            if rings.reduce(0, { $0 + $1.count }) <= smallPolygonLimit {
                return EdgeListArea(rings: rings, projection: projection, envelope: shape.bounds)
            }
            return try GEOSPolygonArea(area: area, rings: rings, projection: projection, context: context)
        }
    }

    /// Inside (within the radius, or covered by the polygon, boundary included) and the
    /// distance to the boundary, in one pass.
    func locate(_ position: Position) throws -> AreaLocation { fatalError("abstract") }

    /// Metres from the position to the region's boundary, whether inside or outside.
    func boundaryDistance(_ position: Position) throws -> Double { fatalError("abstract") }

    /// The first and the last fraction (0...1) along the segment a → b where it crosses the
    /// boundary; nil when it does not.
    func crossingSpan(from a: Position, to b: Position) -> ClosedRange<Double>? { fatalError("abstract") }

    /// Every fraction (0...1) along a → b where it crosses the boundary, in order (a circle:
    /// at most two).
    func crossings(from a: Position, to b: Position) -> [Double] {
        guard let span = crossingSpan(from: a, to: b) else { return [] }
        return span.lowerBound == span.upperBound ? [span.lowerBound] : [span.lowerBound, span.upperBound]
    }

    /// Whether the segment a → b between two outside positions crosses the region.
    func segmentCrosses(from a: Position, to b: Position) throws -> Bool {
        let box = Envelope(spanning: a, b)
        guard box.intersects(envelope) else { return false }
        return crossingSpan(from: a, to: b) != nil
    }

    /// The depth beyond which "deep inside" means nothing more for this region: for a polygon,
    /// a quarter of its bounding box's shorter side (a circle overrides it).
    var deepestUsefulDepth: Double {
        let latitude = min(max(abs(envelope.minY), abs(envelope.maxY)), 89.9)
        let width = (envelope.maxX - envelope.minX) * Geodesy.metresPerDegreeLongitude(atLatitude: latitude)
        let height = (envelope.maxY - envelope.minY) * Geodesy.metresPerDegreeLatitude
        return min(width, height) / 4
    }

    /// Whether a → b meets any edge of the rings.
    static func crossesAny(from a: Position, to b: Position, rings: [[Position]]) -> Bool {
        for ring in rings {
            for index in 0..<(ring.count - 1) where intersection(a, b, ring[index], ring[index + 1]) != nil {
                return true
            }
        }
        return false
    }

    /// The first and the last fraction at which a → b crosses an edge of the rings.
    static func crossingSpan(from a: Position, to b: Position, rings: [[Position]]) -> ClosedRange<Double>? {
        var first = Double.infinity
        var last = -Double.infinity
        for ring in rings {
            for index in 0..<(ring.count - 1) {
                if let fraction = intersection(a, b, ring[index], ring[index + 1]) {
                    first = min(first, fraction)
                    last = max(last, fraction)
                }
            }
        }
        return first <= last ? first...last : nil
    }

    /// Every fraction at which a → b crosses an edge of the rings, in order, each once (a
    /// segment through a vertex meets both its edges there).
    static func crossings(from a: Position, to b: Position, rings: [[Position]]) -> [Double] {
        var fractions: [Double] = []
        for ring in rings {
            for index in 0..<(ring.count - 1) {
                if let fraction = intersection(a, b, ring[index], ring[index + 1]) { fractions.append(fraction) }
            }
        }
        return distinctInOrder(fractions)
    }

    /// Crossing fractions sorted, each once (a segment through a vertex meets both its edges
    /// there).
    static func distinctInOrder(_ fractions: [Double]) -> [Double] {
        var distinct: [Double] = []
        for fraction in fractions.sorted() where distinct.last.map({ fraction - $0 > 1e-12 }) ?? true {
            distinct.append(fraction)
        }
        return distinct
    }

    /// The fraction along p → q at which it meets the edge r → s, planar in lon/lat.
    static func intersection(_ p: Position, _ q: Position, _ r: Position, _ s: Position) -> Double? {
        let dx = q.lon - p.lon
        let dy = q.lat - p.lat
        let ex = s.lon - r.lon
        let ey = s.lat - r.lat
        let denominator = dx * ey - dy * ex
        guard denominator != 0 else { return nil }  // parallel: touching along an edge is not a crossing
        let fx = r.lon - p.lon
        let fy = r.lat - p.lat
        let t = (fx * ey - fy * ex) / denominator
        let u = (fx * dy - fy * dx) / denominator
        guard (0...1).contains(t), (0...1).contains(u) else { return nil }
        return t
    }
}
