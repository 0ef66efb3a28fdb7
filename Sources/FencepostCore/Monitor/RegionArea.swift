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
    }

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
            kind = .polygon(Polygonal(
                prepared: try Geometry(shape: area, context: context).prepared(),
                projection: projection,
                projectedBoundary: try Geometry(shape: projection.project(area), context: context).boundary().prepared(),
                rings: rings))
        }
    }

    /// Inside: within the radius (haversine), or covered by the polygon (boundary included).
    func contains(_ position: Position) throws -> Bool {
        switch kind {
        case .circle(let center, let radius, _):
            return Geodesy.distance(center, position) <= radius
        case .polygon(let polygon):
            return try polygon.prepared.covers(x: position.lon, y: position.lat)
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
        }
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
            var fractions: [Double] = []
            for ring in polygon.rings {
                for index in 0..<(ring.count - 1) {
                    if let fraction = Self.intersection(a, b, ring[index], ring[index + 1]) {
                        fractions.append(fraction)
                    }
                }
            }
            return fractions.sorted()
        }
    }

    /// Whether the segment a → b touches the region at all.
    func segmentTouches(from a: Position, to b: Position) throws -> Bool {
        switch kind {
        case .circle:
            return !crossings(from: a, to: b).isEmpty
        case .polygon(let polygon):
            return try polygon.prepared.intersectsSegment(x1: a.lon, y1: a.lat, x2: b.lon, y2: b.lat)
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
