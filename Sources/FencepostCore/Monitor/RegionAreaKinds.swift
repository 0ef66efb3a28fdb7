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
        super.init(envelope: envelope, metresPerDegreeLon: 0)
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

    override func crossingSpan(from a: Position, to b: Position) -> ClosedRange<Double>? {
        let (ax, ay) = projection.project(a)
        let (bx, by) = projection.project(b)
        let dx = bx - ax
        let dy = by - ay
        let qa = dx * dx + dy * dy
        guard qa > 0 else { return nil }
        let qb = 2 * (ax * dx + ay * dy)
        let qc = ax * ax + ay * ay - radius * radius
        let discriminant = qb * qb - 4 * qa * qc
        guard discriminant >= 0 else { return nil }
        let root = discriminant.squareRoot()
        let roots = ((-qb - root) / (2 * qa), (-qb + root) / (2 * qa))
        let low = (0...1).contains(roots.0) ? roots.0 : nil
        let high = (0...1).contains(roots.1) ? roots.1 : nil
        guard let first = low ?? high, let last = high ?? low else { return nil }
        return first...last
    }
}

/// A small polygon's edges in two flat arrays: their ends in lon/lat for containment (planar,
/// as GEOS tests it), and in local metres their start, direction and inverse squared length for
/// distances. A distance measures only the edges its ``NearestEdgeGrid`` cell lists; the side
/// follows from the nearest of them (``EdgeSides``), or, within a millimetre of the boundary or
/// where rings touch, from a ray cast over every edge.
final class EdgeListArea: RegionArea {
    let rings: [[Position]]
    /// Per edge, the values of ``End`` in order.
    private let ends: [Double]
    /// Per edge, the values of ``Metric`` in order.
    private let metric: [Double]
    private let projection: LocalProjection
    private let grid: NearestEdgeGrid
    /// How a point's side is told: by its nearest edge, or by ray casting (polygons whose rings
    /// touch). Worked out at the polygon's first lookup, as most regions of a large set are
    /// never near a given trace; read and set only through `withSides`, never during another
    /// access, so the run-time exclusivity check is left out.
    @exclusivity(unchecked) private var sideRule = SideRule.unknown
    private enum SideRule {
        case unknown
        /// The rule lent, not retained: `sidesOwner` keeps it, set once with it and never
        /// replaced. (Copied out of the enum, the rule's table was retained and released on
        /// every lookup.)
        case nearestEdge(Unmanaged<SidesBox>)
        case rayCast
    }
    private var sidesOwner: SidesBox?
    private final class SidesBox {
        let sides: EdgeSides
        init(_ sides: EdgeSides) { self.sides = sides }
    }

    /// An edge's ends in lon/lat.
    private enum End: Int, CaseIterable {
        case ax, ay, bx, by
    }
    /// An edge in local metres: its start, its direction, and the inverse of its squared
    /// length (0 for a degenerate edge).
    enum Metric: Int, CaseIterable {
        case x, y, dx, dy, inverseLengthSquared
    }
    private static let endStride = End.allCases.count
    static let metricStride = Metric.allCases.count

    /// Distances this small (metres) may mean the position lies on an edge, which counts as
    /// inside; rounding in the projection is far smaller.
    private static let onEdgeTolerance = 1e-3

    init(rings: [[Position]], projection: LocalProjection, envelope: Envelope) {
        self.rings = rings
        self.projection = projection
        var ends: [Double] = []
        var metric: [Double] = []
        for ring in rings {
            for (a, b) in zip(ring, ring.dropFirst()) {
                let (ax, ay) = projection.project(a)
                let (bx, by) = projection.project(b)
                let (dx, dy) = (bx - ax, by - ay)
                let lengthSquared = dx * dx + dy * dy
                ends += [a.lon, a.lat, b.lon, b.lat]
                metric += [ax, ay, dx, dy, lengthSquared > 0 ? 1 / lengthSquared : 0]
            }
        }
        self.ends = ends
        self.metric = metric
        self.grid = NearestEdgeGrid(edges: Self.projectedEdges(metric))
        super.init(envelope: envelope, metresPerDegreeLon: projection.metresPerDegreeLon)
    }

    /// Whether a point's side is told by its nearest edge (else by ray casting).
    var tellsSidesByNearestEdge: Bool { withSides { _ in true } != nil }

    /// `body` given the nearest-edge rule, or nil to ray cast.
    @inline(__always)
    private func withSides<Result>(_ body: (EdgeSides) -> Result) -> Result? {
        switch sideRule {
        case .nearestEdge(let box): return box._withUnsafeGuaranteedRef { body($0.sides) }
        case .rayCast: return nil
        case .unknown:
            guard let sides = EdgeSides(rings: rings, metric: metric) else {
                sideRule = .rayCast
                return nil
            }
            let box = SidesBox(sides)
            sidesOwner = box
            sideRule = .nearestEdge(Unmanaged.passUnretained(box))
            return body(sides)
        }
    }

    /// The edges in local metres, from their start and direction.
    private static func projectedEdges(_ metric: [Double]) -> [NearestEdgeGrid.Edge] {
        Swift.stride(from: 0, to: metric.count, by: metricStride).map { start in
            let x = metric[start + Metric.x.rawValue]
            let y = metric[start + Metric.y.rawValue]
            let dx = metric[start + Metric.dx.rawValue]
            let dy = metric[start + Metric.dy.rawValue]
            return NearestEdgeGrid.Edge(
                ax: x, ay: y, bx: x + dx, by: y + dy, dx: dx, dy: dy,
                inverseLengthSquared: metric[start + Metric.inverseLengthSquared.rawValue])
        }
    }

    /// The edges that can be nearest to (mx, my), or nil for all.
    @inline(__always)
    private func nearestEdges(_ mx: Double, _ my: Double) -> NearestEdgeGrid.Listed? {
        grid.lookup(x: mx, y: my) { Self.projectedEdges(metric) }
    }

    /// The distance to the nearest edge and the side: from that edge when the polygon has
    /// sides and the point is off the boundary, else by even-odd ray casting over every ring
    /// (points on an edge count as inside).
    override func locate(_ position: Position) -> AreaLocation {
        let (mx, my) = projection.project(position)
        let (squared, edge) = nearestEdge(mx, my, among: nearestEdges(mx, my))
        let distance = squared.squareRoot()
        if distance >= Self.onEdgeTolerance,
            let inside = withSides({ sides in
                metric.withUnsafeBufferPointer { sides.inside(mx, my, nearest: edge, metric: $0) }
            })
        {
            return AreaLocation(inside: inside, boundaryDistance: distance)
        }
        let px = position.lon
        let py = position.lat
        var inside = false
        ends.withUnsafeBufferPointer { e in
            for start in Swift.stride(from: 0, to: e.count, by: Self.endStride) {
                let ay = e[start + End.ay.rawValue]
                let by = e[start + End.by.rawValue]
                if (ay > py) != (by > py) {
                    let ax = e[start + End.ax.rawValue]
                    let bx = e[start + End.bx.rawValue]
                    if px < ax + (py - ay) * (bx - ax) / (by - ay) { inside.toggle() }
                }
            }
        }
        // On an edge, the distance is rounding away from 0: only then is the exact test needed.
        let onEdge = !inside && distance < Self.onEdgeTolerance && liesOnEdge(px, py)
        return AreaLocation(inside: inside || onEdge, boundaryDistance: distance)
    }

    override func boundaryDistance(_ position: Position) -> Double {
        let (mx, my) = projection.project(position)
        return nearestEdge(mx, my, among: nearestEdges(mx, my)).squared.squareRoot()
    }

    /// The squared metres from (mx, my) to the nearest edge and that edge's number, measuring the
    /// `listed` edges if known, else all.
    @inline(__always)
    private func nearestEdge(_ mx: Double, _ my: Double, among listed: NearestEdgeGrid.Listed?) -> (
        squared: Double, number: Int
    ) {
        var best = Double.infinity
        var number = 0
        metric.withUnsafeBufferPointer { m in
            if let listed {
                for edge in listed {
                    let squared = Self.squaredDistance(mx, my, m, edge * Self.metricStride)
                    if squared < best { (best, number) = (squared, edge) }
                }
            } else {
                for edge in 0..<(m.count / Self.metricStride) {
                    let squared = Self.squaredDistance(mx, my, m, edge * Self.metricStride)
                    if squared < best { (best, number) = (squared, edge) }
                }
            }
        }
        return (best, number)
    }

    /// Whether (px, py) lies exactly on an edge, in lon/lat.
    private func liesOnEdge(_ px: Double, _ py: Double) -> Bool {
        ends.withUnsafeBufferPointer { e in
            Swift.stride(from: 0, to: e.count, by: Self.endStride).contains { start in
                let ax = e[start + End.ax.rawValue]
                let ay = e[start + End.ay.rawValue]
                let bx = e[start + End.bx.rawValue]
                let by = e[start + End.by.rawValue]
                return (bx - ax) * (py - ay) - (by - ay) * (px - ax) == 0
                    && px >= min(ax, bx) && px <= max(ax, bx) && py >= min(ay, by) && py <= max(ay, by)
            }
        }
    }

    /// Squared metres from (px, py) to the edge at `start`.
    @inline(__always)
    private static func squaredDistance(_ px: Double, _ py: Double, _ m: UnsafeBufferPointer<Double>, _ start: Int)
        -> Double
    {
        let ax = m[start + Metric.x.rawValue]
        let ay = m[start + Metric.y.rawValue]
        let dx = m[start + Metric.dx.rawValue]
        let dy = m[start + Metric.dy.rawValue]
        let t = min(max(((px - ax) * dx + (py - ay) * dy) * m[start + Metric.inverseLengthSquared.rawValue], 0), 1)
        let ex = ax + t * dx - px
        let ey = ay + t * dy - py
        return ex * ex + ey * ey
    }

    // MARK: - Crossings, from the flat edge array
    //
    // The same edges, in the same order and with the same arithmetic, as the rings' versions
    // in ``RegionArea`` give: walking the rings, an array of arrays, retained and released
    // each ring per call, on the per-fix path (pass-throughs, crossing times).

    override func crossingSpan(from a: Position, to b: Position) -> ClosedRange<Double>? {
        var first = Double.infinity
        var last = -Double.infinity
        forEachCrossing(from: a, to: b) { fraction in
            first = min(first, fraction)
            last = max(last, fraction)
            return true
        }
        return first <= last ? first...last : nil
    }

    override func crossings(from a: Position, to b: Position) -> [Double] {
        var fractions: [Double] = []
        forEachCrossing(from: a, to: b) { fraction in
            fractions.append(fraction)
            return true
        }
        return Self.distinctInOrder(fractions)
    }

    override func segmentCrosses(from a: Position, to b: Position) -> Bool {
        let box = Envelope(spanning: a, b)
        guard box.intersects(envelope) else { return false }
        var crosses = false
        forEachCrossing(from: a, to: b) { _ in
            crosses = true
            return false
        }
        return crosses
    }

    /// Calls `body` with the fraction along a → b of each edge it meets, in edge order, until
    /// `body` returns false.
    @inline(__always)
    private func forEachCrossing(from a: Position, to b: Position, _ body: (Double) -> Bool) {
        ends.withUnsafeBufferPointer { e in
            for start in Swift.stride(from: 0, to: e.count, by: Self.endStride) {
                let r = Position(lon: e[start + End.ax.rawValue], lat: e[start + End.ay.rawValue])
                let s = Position(lon: e[start + End.bx.rawValue], lat: e[start + End.by.rawValue])
                if let fraction = Self.intersection(a, b, r, s), !body(fraction) { return }
            }
        }
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
        super.init(envelope: area.bounds, metresPerDegreeLon: projection.metresPerDegreeLon)
    }

    override func locate(_ position: Position) throws -> AreaLocation {
        AreaLocation(
            inside: try prepared.covers(x: position.lon, y: position.lat),
            boundaryDistance: try boundaryDistance(position))
    }

    override func boundaryDistance(_ position: Position) throws -> Double {
        let (x, y) = projection.project(position)
        return try projectedBoundary.distance(x: x, y: y)
    }

    override func crossingSpan(from a: Position, to b: Position) -> ClosedRange<Double>? {
        Self.crossingSpan(from: a, to: b, rings: rings)
    }

    override func crossings(from a: Position, to b: Position) -> [Double] {
        Self.crossings(from: a, to: b, rings: rings)
    }

    override func segmentCrosses(from a: Position, to b: Position) throws -> Bool {
        let box = Envelope(spanning: a, b)
        guard box.intersects(envelope) else { return false }
        return try prepared.intersectsSegment(x1: a.lon, y1: a.lat, x2: b.lon, y2: b.lat)
    }
}
