import FencepostGeometry

/// Which side of a small polygon's boundary a point lies on, told by the edge nearest to it, so
/// a point whose distance is measured anyway needs no ray cast over every edge.
///
/// No part of the boundary comes nearer to the point than its nearest edge: the open disc
/// reaching that edge lies wholly on the point's side. Where the disc touches the edge, the
/// side is the edge's left or right (the touching point within the edge), or, at a vertex,
/// within the angle its two edges make or outside it. A ring's left is the inside when the ring
/// runs anticlockwise within an even number of the other rings, or clockwise within an odd
/// number: the even–odd rule the ray cast counts by.
///
/// That holds for points off the boundary whose nearest edge is plain. Polygons where it is
/// not have no sides (`init` fails) and are ray cast: a vertex shared by two places of the
/// boundary (rings touching), or a vertex nearer than `closest` to an edge it is not on, where
/// rounding could pick the wrong one of two edges.
struct EdgeSides {
    /// Per edge: the nearest edges before and after it in its ring that have a length (by
    /// number), whether it has none itself, and whether the inside lies on its left.
    private struct Link {
        var before: UInt8
        var after: UInt8
        var degenerate: Bool
        var leftIsInside: Bool
    }

    /// Metres within which a vertex off an edge makes the nearest edge ambiguous.
    static let closest = 1e-6

    private let links: [Link]

    /// `metric` holds the edges as ``EdgeListArea`` lays them out, ring by ring, in `rings`'
    /// order; edge numbers must fit in a byte.
    init?(rings: [[Position]], metric: [Double]) {
        let edges = Self.edges(metric)
        // Each ring's edges, by number.
        var ranges: [Range<Int>] = []
        for ring in rings {
            let start = ranges.last?.upperBound ?? 0
            ranges.append(start..<(start + ring.count - 1))
        }
        guard !edges.isEmpty, edges.count <= Int(UInt8.max) + 1, ranges.last?.upperBound == edges.count,
            Self.vertexPositionsAreDistinct(edges), Self.verticesKeepClearOfEdges(edges, ranges: ranges)
        else { return nil }
        var links: [Link] = []
        for (number, (ring, range)) in zip(rings, ranges).enumerated() {
            let leftIsInside =
                Self.isAnticlockwise(ring) != Self.isWithinOddManyRings(ring[0], of: rings, besides: number)
            guard let ringLinks = Self.links(edges[range], leftIsInside: leftIsInside) else { return nil }
            links += ringLinks
        }
        self.links = links
    }

    /// Whether (px, py), in local metres and at least a millimetre or so off the boundary, lies
    /// inside, given the number of the edge nearest to it.
    @inline(__always)
    func inside(_ px: Double, _ py: Double, nearest number: Int, metric m: UnsafeBufferPointer<Double>) -> Bool {
        let link = links[number]
        let edge = Edge(m, number)
        let t = (px - edge.ax) * edge.dx + (py - edge.ay) * edge.dy
        let left: Bool
        if !link.degenerate, t > 0, t < edge.dx * edge.dx + edge.dy * edge.dy {
            left = edge.dx * (py - edge.ay) - edge.dy * (px - edge.ax) > 0
        } else {
            // Nearest at a vertex: its start, or its end (where the next edge with a length starts).
            let atStart = link.degenerate || t <= 0
            let incoming = Edge(m, atStart ? Int(link.before) : number)
            let outgoing = Edge(m, atStart ? (link.degenerate ? Int(link.after) : number) : Int(link.after))
            let wx = px - outgoing.ax
            let wy = py - outgoing.ay
            let leftOfIncoming = incoming.dx * wy - incoming.dy * wx > 0
            let leftOfOutgoing = outgoing.dx * wy - outgoing.dy * wx > 0
            // Turning left there, the inside of the angle is left of both edges; turning right,
            // left of either.
            let turnsLeft = incoming.dx * outgoing.dy - incoming.dy * outgoing.dx >= 0
            left = turnsLeft ? leftOfIncoming && leftOfOutgoing : leftOfIncoming || leftOfOutgoing
        }
        return left == link.leftIsInside
    }

    /// An edge's start and direction in local metres.
    private struct Edge {
        var ax, ay, dx, dy: Double

        @inline(__always)
        init(_ m: UnsafeBufferPointer<Double>, _ number: Int) {
            let start = number * EdgeListArea.metricStride
            ax = m[start + EdgeListArea.Metric.x.rawValue]
            ay = m[start + EdgeListArea.Metric.y.rawValue]
            dx = m[start + EdgeListArea.Metric.dx.rawValue]
            dy = m[start + EdgeListArea.Metric.dy.rawValue]
        }

        var hasLength: Bool { dx != 0 || dy != 0 }

        func distance(toX x: Double, y: Double) -> Double {
            let lengthSquared = dx * dx + dy * dy
            let t = lengthSquared > 0 ? min(max(((x - ax) * dx + (y - ay) * dy) / lengthSquared, 0), 1) : 0
            let ex = ax + t * dx - x
            let ey = ay + t * dy - y
            return (ex * ex + ey * ey).squareRoot()
        }
    }

    private static func edges(_ metric: [Double]) -> [Edge] {
        metric.withUnsafeBufferPointer { m in
            (0..<(m.count / EdgeListArea.metricStride)).map { Edge(m, $0) }
        }
    }

    /// A ring's links, or nil when it has no edge with a length.
    private static func links(_ ring: ArraySlice<Edge>, leftIsInside: Bool) -> [Link]? {
        guard let firstWithLength = ring.firstIndex(where: \.hasLength),
            let lastWithLength = ring.lastIndex(where: \.hasLength)
        else { return nil }
        var links = ring.indices.map {
            Link(before: 0, after: 0, degenerate: !ring[$0].hasLength, leftIsInside: leftIsInside)
        }
        var before = lastWithLength
        for (slot, number) in ring.indices.enumerated() {
            links[slot].before = UInt8(before)
            if ring[number].hasLength { before = number }
        }
        var after = firstWithLength
        for (slot, number) in ring.indices.enumerated().reversed() {
            links[slot].after = UInt8(after)
            if ring[number].hasLength { after = number }
        }
        return links
    }

    /// No position is a vertex at two places of the boundary. A vertex repeated right after
    /// itself is one place: only starts of edges with a length are compared.
    private static func vertexPositionsAreDistinct(_ edges: [Edge]) -> Bool {
        let starts = edges.filter(\.hasLength).map { ($0.ax, $0.ay) }.sorted { $0 < $1 }
        return zip(starts, starts.dropFirst()).allSatisfy { $0 != $1 }
    }

    /// Every vertex (each edge's start) is an end of an edge or farther than `closest` from it.
    private static func verticesKeepClearOfEdges(_ edges: [Edge], ranges: [Range<Int>]) -> Bool {
        // Vertices by x, so each edge looks only at those within its x-range.
        let vertices = edges.map { ($0.ax, $0.ay) }.sorted { $0.0 < $1.0 }
        func firstVertex(atOrAfter x: Double) -> Int {
            var low = 0
            var high = vertices.count
            while low < high {
                let middle = (low + high) / 2
                if vertices[middle].0 < x { low = middle + 1 } else { high = middle }
            }
            return low
        }
        for range in ranges {
            for number in range where edges[number].hasLength {
                let edge = edges[number]
                // Its end is the next edge's start, as projected from the same position.
                let end = edges[number + 1 == range.upperBound ? range.lowerBound : number + 1]
                let maxX = max(edge.ax, end.ax) + closest
                let minY = min(edge.ay, end.ay) - closest
                let maxY = max(edge.ay, end.ay) + closest
                for (x, y) in vertices[firstVertex(atOrAfter: min(edge.ax, end.ax) - closest)...] {
                    if x > maxX { break }
                    if y >= minY, y <= maxY, !(x == edge.ax && y == edge.ay), !(x == end.ax && y == end.ay),
                        edge.distance(toX: x, y: y) < closest
                    {
                        return false
                    }
                }
            }
        }
        return true
    }

    /// The shoelace sum's sign, in lon/lat about the ring's first vertex.
    private static func isAnticlockwise(_ ring: [Position]) -> Bool {
        let origin = ring[0]
        var twiceArea = 0.0
        for (a, b) in zip(ring, ring.dropFirst()) {
            twiceArea += (a.lon - origin.lon) * (b.lat - origin.lat) - (b.lon - origin.lon) * (a.lat - origin.lat)
        }
        return twiceArea > 0
    }

    /// Whether the point lies within an odd number of the other rings (even–odd ray casts; the
    /// point is on none of them, as the rings do not touch).
    private static func isWithinOddManyRings(_ point: Position, of rings: [[Position]], besides skipped: Int) -> Bool {
        var odd = false
        for (number, ring) in rings.enumerated() where number != skipped {
            for (a, b) in zip(ring, ring.dropFirst()) where (a.lat > point.lat) != (b.lat > point.lat) {
                if point.lon < a.lon + (point.lat - a.lat) * (b.lon - a.lon) / (b.lat - a.lat) { odd.toggle() }
            }
        }
        return odd
    }
}
