import FencepostGeometry
import Foundation

/// A circle, exact on the sphere: inside within the radius by haversine distance.
final class CircleArea: RegionArea {
    let center: Position
    let radius: Double
    private let projection: LocalProjection
    /// The cosine of the centre's latitude, for the haversine distances from it.
    private let cosCenterLatitude: Double

    init(center: Position, radius: Double, envelope: Envelope) {
        self.center = center
        self.radius = radius
        self.projection = LocalProjection(origin: center)
        self.cosCenterLatitude = cos(center.lat * .pi / 180)
        super.init(envelope: envelope)
    }

    override func locate(_ position: Position) -> AreaLocation {
        let distance = Geodesy.distance(from: center, cosLatitude: cosCenterLatitude, to: position)
        return AreaLocation(inside: distance <= radius, boundaryDistance: abs(distance - radius))
    }

    override func boundaryDistance(_ position: Position) -> Double {
        abs(Geodesy.distance(from: center, cosLatitude: cosCenterLatitude, to: position) - radius)
    }

    /// Half the radius.
    override var deepestUsefulDepth: Double { radius / 2 }

    override func crossings(from a: Position, to b: Position) -> [Double] {
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
    }
}

/// A small polygon's edges as one flat array: each edge's ends in lon/lat for containment
/// (planar, as GEOS tests it) and, in local metres, its start, direction and inverse squared
/// length for distances; both read in one scan.
final class EdgeListArea: RegionArea {
    let rings: [[Position]]
    /// Per edge, the values of ``Field`` in order.
    private let edges: [Double]
    private let projection: LocalProjection

    /// The values kept per edge: its ends in lon/lat, then in local metres its start,
    /// direction and inverse squared length (0 for a degenerate edge).
    private enum Field: Int, CaseIterable {
        case ax, ay, bx, by, mx, my, mdx, mdy, inverseLengthSquared
    }
    private static let stride = Field.allCases.count

    init(rings: [[Position]], projection: LocalProjection, envelope: Envelope) {
        self.rings = rings
        self.projection = projection
        var edges: [Double] = []
        for ring in rings {
            for (a, b) in zip(ring, ring.dropFirst()) {
                let (ax, ay) = projection.project(a)
                let (bx, by) = projection.project(b)
                let (dx, dy) = (bx - ax, by - ay)
                let lengthSquared = dx * dx + dy * dy
                edges += [a.lon, a.lat, b.lon, b.lat, ax, ay, dx, dy, lengthSquared > 0 ? 1 / lengthSquared : 0]
            }
        }
        self.edges = edges
        super.init(envelope: envelope)
    }

    /// Even-odd ray casting over every ring (points on an edge count as inside) and the
    /// distance to the nearest edge.
    override func locate(_ position: Position) -> AreaLocation {
        let px = position.lon, py = position.lat
        let (mx, my) = projection.project(position)
        var inside = false
        var onEdge = false
        var best = Double.infinity
        edges.withUnsafeBufferPointer { e in
            for start in Swift.stride(from: 0, to: e.count, by: Self.stride) {
                let ax = e[start + Field.ax.rawValue], ay = e[start + Field.ay.rawValue]
                let bx = e[start + Field.bx.rawValue], by = e[start + Field.by.rawValue]
                if (bx - ax) * (py - ay) - (by - ay) * (px - ax) == 0,
                    px >= min(ax, bx), px <= max(ax, bx), py >= min(ay, by), py <= max(ay, by)
                {
                    onEdge = true
                }
                if (ay > py) != (by > py), px < ax + (py - ay) * (bx - ax) / (by - ay) {
                    inside.toggle()
                }
                best = min(best, Self.squaredDistance(mx, my, e, start))
            }
        }
        return AreaLocation(inside: inside || onEdge, boundaryDistance: best.squareRoot())
    }

    override func boundaryDistance(_ position: Position) -> Double {
        let (mx, my) = projection.project(position)
        var best = Double.infinity
        edges.withUnsafeBufferPointer { e in
            for start in Swift.stride(from: 0, to: e.count, by: Self.stride) {
                best = min(best, Self.squaredDistance(mx, my, e, start))
            }
        }
        return best.squareRoot()
    }

    /// Squared metres from (px, py) to the edge at `start`.
    @inline(__always)
    private static func squaredDistance(_ px: Double, _ py: Double, _ e: UnsafeBufferPointer<Double>, _ start: Int) -> Double {
        let ax = e[start + Field.mx.rawValue], ay = e[start + Field.my.rawValue]
        let dx = e[start + Field.mdx.rawValue], dy = e[start + Field.mdy.rawValue]
        let t = min(max(((px - ax) * dx + (py - ay) * dy) * e[start + Field.inverseLengthSquared.rawValue], 0), 1)
        let ex = ax + t * dx - px, ey = ay + t * dy - py
        return ex * ex + ey * ey
    }

    override func crossings(from a: Position, to b: Position) -> [Double] {
        Self.crossings(from: a, to: b, rings: rings)
    }

    override func segmentCrosses(from a: Position, to b: Position) -> Bool {
        let box = Envelope(minX: min(a.lon, b.lon), minY: min(a.lat, b.lat), maxX: max(a.lon, b.lon), maxY: max(a.lat, b.lat))
        return box.intersects(envelope) && Self.crossesAny(from: a, to: b, rings: rings)
    }
}

/// A larger polygon, tested through GEOS prepared geometries: covers in lon/lat, distance to the
/// boundary in the local projection.
final class GEOSPolygonArea: RegionArea {
    private let prepared: PreparedGeometry
    private let projection: LocalProjection
    private let projectedBoundary: PreparedGeometry
    private let rings: [[Position]]

    init(area: Shape, rings: [[Position]], projection: LocalProjection, context: GEOSContext) throws {
        self.prepared = try Geometry(shape: area, context: context).prepared()
        self.projection = projection
        self.projectedBoundary = try Geometry(shape: projection.project(area), context: context).boundary().prepared()
        self.rings = rings
        super.init(envelope: area.bounds)
    }

    override func locate(_ position: Position) throws -> AreaLocation {
        AreaLocation(inside: try prepared.covers(x: position.lon, y: position.lat), boundaryDistance: try boundaryDistance(position))
    }

    override func boundaryDistance(_ position: Position) throws -> Double {
        let (x, y) = projection.project(position)
        return try projectedBoundary.distance(x: x, y: y)
    }

    override func crossings(from a: Position, to b: Position) -> [Double] {
        Self.crossings(from: a, to: b, rings: rings)
    }

    override func segmentCrosses(from a: Position, to b: Position) throws -> Bool {
        let box = Envelope(minX: min(a.lon, b.lon), minY: min(a.lat, b.lat), maxX: max(a.lon, b.lon), maxY: max(a.lat, b.lat))
        guard box.intersects(envelope) else { return false }
        return try prepared.intersectsSegment(x1: a.lon, y1: a.lat, x2: b.lon, y2: b.lat)
    }
}
