import FencepostGeometry

/// A region's geometry compiled for the monitor: containment, metric distance to the boundary,
/// and where a straight segment crosses the boundary.
///
/// Circles are exact on the sphere (haversine); polygons are planar in lon/lat (GEOS prepared
/// geometry), with distances in metres through a local projection centred on the region.
/// Holds GEOS state, so it lives on its monitor's thread.
final class RegionArea {
    let envelope: Envelope
    private let kind: Kind

    private enum Kind {
        case circle(center: Position, radius: Double, projection: LocalProjection)
        case polygon(Polygonal)
        case smallPolygon(EdgeList)
    }

    /// Polygons up to this many vertices are tested by a plain scan of their edges, which for
    /// so few edges is several times faster than a GEOS call; larger ones use GEOS's indexes.
    static let smallPolygonLimit = 128

    private struct Polygonal {
        let prepared: PreparedGeometry
        let projection: LocalProjection
        let projectedBoundary: PreparedGeometry
        let rings: [[Position]]
    }

    init(shape: RegionShape, context: GEOSContext) throws {
        envelope = shape.bounds
        switch shape {
        case .circle(let center, let radius):
            kind = .circle(center: center, radius: radius, projection: LocalProjection(origin: center))
        case .area(let area):
            let projection = LocalProjection(centredOn: area.bounds)
            let rings: [[Position]]
            switch area {
            case .polygon(let polygon): rings = polygon.rings
            case .multiPolygon(let polygons): rings = polygons.flatMap(\.rings)
            case .point: preconditionFailure("an area region is never a point")
            }
            if rings.reduce(0, { $0 + $1.count }) <= Self.smallPolygonLimit {
                kind = .smallPolygon(EdgeList(rings: rings, projection: projection))
            } else {
                kind = .polygon(Polygonal(
                    prepared: try Geometry(shape: area, context: context).prepared(),
                    projection: projection,
                    projectedBoundary: try Geometry(shape: projection.project(area), context: context).boundary().prepared(),
                    rings: rings))
            }
        }
    }

    /// Inside: within the radius (haversine), or covered by the polygon (boundary included).
    func contains(_ position: Position) throws -> Bool {
        switch kind {
        case .circle(let center, let radius, _):
            return Geodesy.distance(center, position) <= radius
        case .polygon(let polygon):
            return try polygon.prepared.covers(x: position.lon, y: position.lat)
        case .smallPolygon(let edges):
            return edges.covers(position)
        }
    }

    /// Metres from the position to the region's boundary, whether inside or outside.
    func boundaryDistance(_ position: Position) throws -> Double {
        switch kind {
        case .circle(let center, let radius, _):
            return abs(Geodesy.distance(center, position) - radius)
        case .polygon(let polygon):
            let (x, y) = polygon.projection.project(position)
            return try polygon.projectedBoundary.distance(x: x, y: y)
        case .smallPolygon(let edges):
            return edges.boundaryDistance(position)
        }
    }

    /// The depth beyond which "deep inside" means nothing more for this region: half a circle's
    /// radius; for a polygon, a quarter of its bounding box's shorter side.
    var deepestUsefulDepth: Double {
        switch kind {
        case .circle(_, let radius, _):
            return radius / 2
        case .polygon, .smallPolygon:
            let latitude = min(max(abs(envelope.minY), abs(envelope.maxY)), 89.9)
            let width = (envelope.maxX - envelope.minX) * Geodesy.metresPerDegreeLongitude(atLatitude: latitude)
            let height = (envelope.maxY - envelope.minY) * Geodesy.metresPerDegreeLatitude
            return min(width, height) / 4
        }
    }

    /// A cheap lower bound on the metres from an outside position to the region: the distance
    /// to its bounding box (0 inside the box).
    func distanceToEnvelope(_ position: Position) -> Double {
        let dLon = max(envelope.minX - position.lon, 0, position.lon - envelope.maxX)
        let dLat = max(envelope.minY - position.lat, 0, position.lat - envelope.maxY)
        guard dLon > 0 || dLat > 0 else { return 0 }
        let latitude = min(max(abs(position.lat), abs(envelope.minY), abs(envelope.maxY)), 89.9)
        let x = dLon * Geodesy.metresPerDegreeLongitude(atLatitude: latitude)
        let y = dLat * Geodesy.metresPerDegreeLatitude
        return (x * x + y * y).squareRoot()
    }

    /// Fractions (0...1) along the segment a → b where it crosses the boundary, ascending.
    func crossings(from a: Position, to b: Position) -> [Double] {
        switch kind {
        case .circle(_, let radius, let projection):
            let (ax, ay) = projection.project(a)
            let (bx, by) = projection.project(b)
            let dx = bx - ax, dy = by - ay
            let qa = dx * dx + dy * dy
            guard qa > 0 else { return [] }
            let qb = 2 * (ax * dx + ay * dy)
            let qc = ax * ax + ay * ay - radius * radius
            let discriminant = qb * qb - 4 * qa * qc
            guard discriminant >= 0 else { return [] }
            let root = discriminant.squareRoot()
            return [(-qb - root) / (2 * qa), (-qb + root) / (2 * qa)].filter { (0...1).contains($0) }
        case .polygon(let polygon):
            return Self.crossings(from: a, to: b, rings: polygon.rings)
        case .smallPolygon(let edges):
            return Self.crossings(from: a, to: b, rings: edges.rings)
        }
    }

    private static func crossings(from a: Position, to b: Position, rings: [[Position]]) -> [Double] {
        var fractions: [Double] = []
        for ring in rings {
            for index in 0..<(ring.count - 1) {
                if let fraction = Self.intersection(a, b, ring[index], ring[index + 1]) {
                    fractions.append(fraction)
                }
            }
        }
        return fractions.sorted()
    }

    /// Whether the segment a → b between two outside positions crosses the region.
    func segmentCrosses(from a: Position, to b: Position) throws -> Bool {
        let box = Envelope(minX: min(a.lon, b.lon), minY: min(a.lat, b.lat), maxX: max(a.lon, b.lon), maxY: max(a.lat, b.lat))
        guard box.intersects(envelope) else { return false }
        switch kind {
        case .circle:
            return !crossings(from: a, to: b).isEmpty
        case .polygon(let polygon):
            return try polygon.prepared.intersectsSegment(x1: a.lon, y1: a.lat, x2: b.lon, y2: b.lat)
        case .smallPolygon(let edges):
            return !Self.crossings(from: a, to: b, rings: edges.rings).isEmpty
        }
    }

    /// The fraction along p → q at which it meets the edge r → s, planar in lon/lat.
    private static func intersection(_ p: Position, _ q: Position, _ r: Position, _ s: Position) -> Double? {
        let dx = q.lon - p.lon, dy = q.lat - p.lat
        let ex = s.lon - r.lon, ey = s.lat - r.lat
        let denominator = dx * ey - dy * ex
        guard denominator != 0 else { return nil }  // parallel: touching along an edge is not a crossing
        let fx = r.lon - p.lon, fy = r.lat - p.lat
        let t = (fx * ey - fy * ex) / denominator
        let u = (fx * dy - fy * dx) / denominator
        guard (0...1).contains(t), (0...1).contains(u) else { return nil }
        return t
    }
}

/// A small polygon's rings as flat coordinate arrays: lon/lat for containment (planar, as
/// GEOS tests it) and local metres for distances.
struct EdgeList {
    let rings: [[Position]]
    private let lonLat: [Double]
    private let metres: [Double]
    /// Where each ring starts in the flat arrays (in positions), plus the end.
    private let starts: [Int]
    private let projection: LocalProjection

    init(rings: [[Position]], projection: LocalProjection) {
        self.rings = rings
        self.projection = projection
        var lonLat: [Double] = [], metres: [Double] = [], starts: [Int] = [0]
        for ring in rings {
            for position in ring {
                lonLat.append(position.lon)
                lonLat.append(position.lat)
                let (x, y) = projection.project(position)
                metres.append(x)
                metres.append(y)
            }
            starts.append(starts.last! + ring.count)
        }
        self.lonLat = lonLat
        self.metres = metres
        self.starts = starts
    }

    /// Even-odd ray casting over every ring, with points on an edge counted inside.
    func covers(_ position: Position) -> Bool {
        let px = position.lon, py = position.lat
        var inside = false
        return lonLat.withUnsafeBufferPointer { c in
            for ring in 0..<(starts.count - 1) {
                for i in starts[ring]..<(starts[ring + 1] - 1) {
                    let ax = c[2 * i], ay = c[2 * i + 1], bx = c[2 * i + 2], by = c[2 * i + 3]
                    // On the edge: collinear and within its box.
                    if (bx - ax) * (py - ay) - (by - ay) * (px - ax) == 0,
                        px >= min(ax, bx), px <= max(ax, bx), py >= min(ay, by), py <= max(ay, by)
                    {
                        return true
                    }
                    if (ay > py) != (by > py), px < ax + (py - ay) * (bx - ax) / (by - ay) {
                        inside.toggle()
                    }
                }
            }
            return inside
        }
    }

    /// Metres from the position to the nearest edge.
    func boundaryDistance(_ position: Position) -> Double {
        let (px, py) = projection.project(position)
        var best = Double.infinity
        metres.withUnsafeBufferPointer { c in
            for ring in 0..<(starts.count - 1) {
                for i in starts[ring]..<(starts[ring + 1] - 1) {
                    let ax = c[2 * i], ay = c[2 * i + 1], bx = c[2 * i + 2], by = c[2 * i + 3]
                    let dx = bx - ax, dy = by - ay
                    let length = dx * dx + dy * dy
                    var t = length > 0 ? ((px - ax) * dx + (py - ay) * dy) / length : 0
                    t = min(max(t, 0), 1)
                    let ex = ax + t * dx - px, ey = ay + t * dy - py
                    best = min(best, ex * ex + ey * ey)
                }
            }
        }
        return best.squareRoot()
    }
}
