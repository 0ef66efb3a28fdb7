public import FencepostGeometry

/// A circle a phone's OS can monitor in place of a region: the region's own circle, or the
/// smallest circle around a polygon or corridor (`approximate`: the phone sees the enter early
/// and the exit late where the shape does not fill the circle).
public struct OSCircle: Sendable, Hashable {
    public var center: Position
    /// Metres.
    public var radius: Double
    public var approximate: Bool

    public init(center: Position, radius: Double, approximate: Bool) {
        self.center = center
        self.radius = radius
        self.approximate = approximate
    }

    /// The circle for `shape`: exact for a circle, else the smallest circle enclosing every
    /// vertex of the polygon (a corridor's outline), found in a local projection and widened
    /// to the farthest vertex by great-circle distance, so no vertex lies outside it.
    public init(_ shape: RegionShape) {
        switch shape {
        case .circle(let center, let radius):
            self.init(center: center, radius: radius, approximate: false)
        case .area, .corridor:
            let vertices = shape.polygonal?.positions ?? shape.geometry.positions
            self = Self.enclosing(vertices)
        }
    }

    /// Metres from `position` to the circle's edge: negative inside.
    public func distanceToEdge(from position: Position) -> Double {
        Geodesy.distance(position, center) - radius
    }

    /// The smallest circle around `vertices` (Welzl's incremental algorithm, in a fixed
    /// pseudo-random order so the answer is the same every time).
    static func enclosing(_ vertices: [Position]) -> OSCircle {
        guard let first = vertices.first else {
            return OSCircle(center: Position(lon: 0, lat: 0), radius: 0, approximate: true)
        }
        let projection = LocalProjection(centredOn: Envelope(covering: vertices))
        var points = vertices.map { projection.project($0) }.map { Point(x: $0.x, y: $0.y) }
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        for index in stride(from: points.count - 1, to: 0, by: -1) {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            points.swapAt(index, Int((state >> 33) % UInt64(index + 1)))
        }
        var disc = Disc(center: points[0], radius: 0)
        for i in points.indices where !disc.contains(points[i]) {
            disc = Disc(center: points[i], radius: 0)
            for j in 0..<i where !disc.contains(points[j]) {
                disc = Disc(points[i], points[j])
                for k in 0..<j where !disc.contains(points[k]) {
                    disc = Disc(points[i], points[j], points[k])
                }
            }
        }
        let center = projection.unproject(x: disc.center.x, y: disc.center.y)
        guard center.lat.isFinite, center.lon.isFinite else {
            return OSCircle(center: first, radius: 0, approximate: true)
        }
        // The projection bends distances a little: the farthest vertex on the sphere decides.
        let radius = vertices.reduce(0) { max($0, Geodesy.distance(center, $1)) }
        return OSCircle(center: center, radius: radius, approximate: true)
    }

    private struct Point {
        var x: Double
        var y: Double
    }

    private struct Disc {
        var center: Point
        var radius: Double

        init(center: Point, radius: Double) {
            self.center = center
            self.radius = radius
        }

        /// The circle with `a` and `b` at the ends of a diameter.
        init(_ a: Point, _ b: Point) {
            center = Point(x: (a.x + b.x) / 2, y: (a.y + b.y) / 2)
            radius = ((a.x - b.x) * (a.x - b.x) + (a.y - b.y) * (a.y - b.y)).squareRoot() / 2
        }

        /// The circle through `a`, `b` and `c`; for points in a line, the widest pair's.
        init(_ a: Point, _ b: Point, _ c: Point) {
            let (bx, by, cx, cy) = (b.x - a.x, b.y - a.y, c.x - a.x, c.y - a.y)
            let d = 2 * (bx * cy - by * cx)
            guard abs(d) > 1e-12 else {
                self = [Disc(a, b), Disc(a, c), Disc(b, c)].max { $0.radius < $1.radius }!
                return
            }
            let ux = (cy * (bx * bx + by * by) - by * (cx * cx + cy * cy)) / d
            let uy = (bx * (cx * cx + cy * cy) - cx * (bx * bx + by * by)) / d
            center = Point(x: a.x + ux, y: a.y + uy)
            radius = (ux * ux + uy * uy).squareRoot()
        }

        func contains(_ point: Point) -> Bool {
            let (dx, dy) = (point.x - center.x, point.y - center.y)
            return (dx * dx + dy * dy).squareRoot() <= radius * (1 + 1e-9) + 1e-6
        }
    }
}
