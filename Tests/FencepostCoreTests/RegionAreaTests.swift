import FencepostGeometry
import FencepostTestSupport
import Foundation
import PropertyBased
import Testing

@testable import FencepostCore

/// The small-polygon scan (containment by ray casting, distances through the nearest-edge grid)
/// against GEOS on the same polygon: the same inside/outside answer and the same distance to the
/// boundary, for points on vertices, near edges, deep inside and far outside the grid.
@Suite struct RegionAreaTests {
    /// A random star-shaped polygon around the origin, its rings either way round, sometimes
    /// with a hole, and the points to test it at.
    static func polygon(seed: UInt64) -> (shape: Shape, points: [Position]) {
        var random = SplitMix64(seed: seed)
        let grid = LocalGrid(origin: Position(lon: -120 + random.unit() * 240, lat: -70 + random.unit() * 140))
        let size = 20 + random.unit() * 1_500
        let count = 3 + Int(random.unit() * 60)
        var ring = (0..<count).map { k -> Position in
            let angle = 2 * Double.pi * Double(k) / Double(count)
            let radius = size * (0.3 + 0.7 * random.unit())
            return grid.at(radius * cos(angle), radius * sin(angle))
        }
        ring.append(ring[0])
        if random.unit() < 0.3 { ring.reverse() }
        var rings = [ring]
        if random.unit() < 0.4 {
            let half = size * 0.1
            var hole = [
                grid.at(-half, -half), grid.at(-half, half), grid.at(half, half), grid.at(half, -half),
                grid.at(-half, -half),
            ]
            if random.unit() < 0.3 { hole.reverse() }
            rings.append(hole)
        }
        var points = rings.flatMap { $0 }
        for _ in 0..<300 {
            let reach = size * (random.unit() < 0.8 ? 1.3 : 4)
            points.append(grid.at((random.unit() * 2 - 1) * reach, (random.unit() * 2 - 1) * reach))
        }
        // Near the edges: a vertex's neighbourhood within a few metres, and beside an edge's
        // middle from a tenth of a millimetre to a metre off, either side.
        for (a, b) in zip(ring, ring.dropFirst()) {
            let (x, y) = grid.projection.project(a)
            let (bx, by) = grid.projection.project(b)
            points.append(grid.at(x + (random.unit() - 0.5) * 6, y + (random.unit() - 0.5) * 6))
            let length = ((bx - x) * (bx - x) + (by - y) * (by - y)).squareRoot()
            let off = (random.unit() < 0.5 ? -1 : 1) * pow(10, -4 + 4 * random.unit()) / length
            points.append(grid.at((x + bx) / 2 - (by - y) * off, (y + by) / 2 + (bx - x) * off))
        }
        return (.polygon(PolygonCoordinates(rings: rings)), points)
    }

    /// The scan and GEOS on the same polygon agree at every point.
    static func expectAgreement(_ shape: Shape, at points: [Position], seed: UInt64 = 0) -> EdgeListArea {
        let rings = shape.rings
        let projection = LocalProjection(centredOn: shape.bounds)
        let scanned = EdgeListArea(rings: rings, projection: projection, envelope: shape.bounds)
        let reference = try! GEOSPolygonArea(area: shape, rings: rings, projection: projection, context: GEOSContext())
        for point in points {
            let found = scanned.locate(point)
            let expected = try! reference.locate(point)
            #expect(
                found.inside == expected.inside, "seed \(seed): inside at \(point), \(found.boundaryDistance) m off")
            #expect(
                abs(found.boundaryDistance - expected.boundaryDistance) <= 1e-6 * max(1, expected.boundaryDistance),
                "seed \(seed): \(found.boundaryDistance) vs GEOS \(expected.boundaryDistance) at \(point)")
            #expect(scanned.boundaryDistance(point) == found.boundaryDistance)
        }
        return scanned
    }

    @Test func edgeScanAgreesWithGEOS() async {
        await propertyCheck(count: 60, input: Gen.uint64(in: 0...UInt64.max)) { seed in
            let (shape, points) = Self.polygon(seed: seed)
            let scanned = Self.expectAgreement(shape, at: points, seed: seed)
            // These rings keep clear of each other: sides come from the nearest edge.
            #expect(scanned.tellsSidesByNearestEdge, "seed \(seed)")
        }
    }

    /// Rings that touch (a hole at the shell's corner, two parts sharing a corner) make the
    /// nearest edge ambiguous there: such polygons are ray cast, and still agree with GEOS.
    @Test func touchingRingsAreRayCast() {
        let grid = LocalGrid()
        func square(_ x: Double, _ y: Double, _ side: Double) -> [Position] {
            [grid.at(x, y), grid.at(x + side, y), grid.at(x + side, y + side), grid.at(x, y + side), grid.at(x, y)]
        }
        let hole = [grid.at(100, 100), grid.at(80, 50), grid.at(50, 80), grid.at(100, 100)]
        let shell = Shape.polygon(PolygonCoordinates(rings: [square(0, 0, 100), hole]))
        let parts = Shape.multiPolygon([
            PolygonCoordinates(rings: [square(0, 0, 100)]), PolygonCoordinates(rings: [square(100, 100, 50)]),
        ])
        let apart = Shape.multiPolygon([
            PolygonCoordinates(rings: [square(0, 0, 100)]), PolygonCoordinates(rings: [square(120, 120, 50)]),
        ])
        let points = stride(from: -10.0, through: 180, by: 2.5).flatMap { x in
            stride(from: -10.0, through: 180, by: 2.5).map { grid.at(x + 0.3, $0 + 0.7) }
        }
        #expect(!Self.expectAgreement(shell, at: points).tellsSidesByNearestEdge)
        #expect(!Self.expectAgreement(parts, at: points).tellsSidesByNearestEdge)
        #expect(Self.expectAgreement(apart, at: points).tellsSidesByNearestEdge)
    }

    /// A small polygon's crossings, read from its flat edge array, are the rings' crossings to
    /// the last bit: the span, every fraction in order and whether a segment meets an edge, for
    /// segments between the test points (through vertices, along edges, across holes).
    @Test func edgeListCrossingsEqualTheRings() async {
        await propertyCheck(count: 40, input: Gen.uint64(in: 0...UInt64.max)) { seed in
            let (shape, points) = Self.polygon(seed: seed)
            let rings = shape.rings
            let area = EdgeListArea(
                rings: rings, projection: LocalProjection(centredOn: shape.bounds), envelope: shape.bounds)
            var crossed = 0
            for (a, b) in zip(points, points.dropFirst(7) + points.prefix(7)) {
                let span = RegionArea.crossingSpan(from: a, to: b, rings: rings)
                #expect(area.crossingSpan(from: a, to: b) == span, "seed \(seed): \(a) → \(b)")
                #expect(
                    area.crossings(from: a, to: b) == RegionArea.crossings(from: a, to: b, rings: rings),
                    "seed \(seed): \(a) → \(b)")
                #expect(
                    area.segmentCrosses(from: a, to: b)
                        == (Envelope(spanning: a, b).intersects(shape.bounds)
                            && RegionArea.crossesAny(from: a, to: b, rings: rings)),
                    "seed \(seed): \(a) → \(b)")
                if span != nil { crossed += 1 }
            }
            // The segments do cross the boundary, many of them.
            #expect(crossed > 20, "seed \(seed)")
        }
    }

    /// Beside a square's edge the grid lists a few edges, that one among them.
    @Test func gridListsTheNearbyEdge() {
        let edges: [NearestEdgeGrid.Edge] = [
            .init(ax: 0, ay: 0, bx: 100, by: 0), .init(ax: 100, ay: 0, bx: 100, by: 100),
            .init(ax: 100, ay: 100, bx: 0, by: 100), .init(ax: 0, ay: 100, bx: 0, by: 0),
        ]
        let grid = NearestEdgeGrid(edges: edges)
        let listed = grid.lookup(x: 50, y: -3) { edges }.map(Array.init)
        #expect(listed?.contains(0) == true)
        #expect((listed?.count ?? 99) <= 2)
        #expect(grid.lookup(x: 50, y: -500) { edges } == nil)
    }

    /// A polygon's edges in local metres, with the projection.
    static func projectedEdges(_ shape: Shape) -> (edges: [NearestEdgeGrid.Edge], projection: LocalProjection)? {
        guard case .polygon(let polygon) = shape else { return nil }
        let projection = LocalProjection(centredOn: shape.bounds)
        var edges: [NearestEdgeGrid.Edge] = []
        for ring in polygon.rings {
            for (a, b) in zip(ring, ring.dropFirst()) {
                let (ax, ay) = projection.project(a)
                let (bx, by) = projection.project(b)
                edges.append(NearestEdgeGrid.Edge(ax: ax, ay: ay, bx: bx, by: by))
            }
        }
        return (edges, projection)
    }

    /// The grid asks for the edges once, at its first lookup, and works every later cell out
    /// from the ones it kept: each lookup lists what a new grid's first lookup there lists.
    @Test func gridKeepsTheEdgesOfItsFirstLookup() async {
        await propertyCheck(count: 40, input: Gen.uint64(in: 0...UInt64.max)) { seed in
            let (shape, points) = Self.polygon(seed: seed)
            guard let (edges, projection) = Self.projectedEdges(shape) else { return }
            let grid = NearestEdgeGrid(edges: edges)
            var asked = 0
            for point in points {
                let (x, y) = projection.project(point)
                let kept = grid.lookup(x: x, y: y) {
                    asked += 1
                    return edges
                }.map(Array.init)
                let fresh = NearestEdgeGrid(edges: edges).lookup(x: x, y: y) { edges }.map(Array.init)
                #expect(kept == fresh, "seed \(seed) at \(point)")
            }
            #expect(asked <= 1, "seed \(seed)")
        }
    }

    /// The grid lists the nearest edge: its distances equal those of a scan of every edge, to
    /// the last bit, for points all over and around the polygon.
    @Test func gridDistanceEqualsFullScan() async {
        await propertyCheck(count: 60, input: Gen.uint64(in: 0...UInt64.max)) { seed in
            let (shape, points) = Self.polygon(seed: seed)
            guard case .polygon(let polygon) = shape, let (edges, projection) = Self.projectedEdges(shape) else {
                return
            }
            let grid = NearestEdgeGrid(edges: edges)
            func squared(_ x: Double, _ y: Double, _ edge: NearestEdgeGrid.Edge) -> Double {
                let dx = edge.bx - edge.ax
                let dy = edge.by - edge.ay
                let lengthSquared = dx * dx + dy * dy
                let t =
                    lengthSquared > 0 ? min(max(((x - edge.ax) * dx + (y - edge.ay) * dy) / lengthSquared, 0), 1) : 0
                let ex = edge.ax + t * dx - x
                let ey = edge.ay + t * dy - y
                return ex * ex + ey * ey
            }
            var listedLookups = 0
            for point in points {
                let (x, y) = projection.project(point)
                let everyEdge = edges.map { squared(x, y, $0) }.min()!
                guard let listed = grid.lookup(x: x, y: y, edges: { edges }) else { continue }
                listedLookups += 1
                let numbers = Array(listed)
                #expect(!numbers.isEmpty && numbers.count <= NearestEdgeGrid.maximumListed)
                #expect(numbers.map { squared(x, y, edges[$0]) }.min() == everyEdge, "seed \(seed) at \(point)")
            }
            // Cells list at most `maximumListed` edges: with no more edges than that, every point
            // in the grid (the vertices are) gets a list.
            if edges.count <= NearestEdgeGrid.maximumListed {
                #expect(listedLookups >= polygon.rings.reduce(0) { $0 + $1.count }, "seed \(seed)")
            }
        }
    }
}
