/// For a small polygon, which of its edges can be the nearest one to a point, per cell of a
/// grid over the polygon and its surroundings (local metres), so a distance to the boundary
/// measures a few edges instead of all of them.
///
/// A cell lists every edge whose distance to the cell is at most an upper bound of the distance
/// from any point of the cell to its nearest edge; the nearest edge of a point in the cell is then
/// always listed, so the minimum over the listed edges is the minimum over all edges, exactly
/// (the same arithmetic on the same edge). Cells are worked out the first time a point falls in
/// them (a trace passes near few of a region's cells); one with more than `maximumListed` such
/// edges (the middle of a round region) says to measure every edge.
///
/// Each cell is one 64-bit word, the count in its low byte and up to seven edge numbers in the
/// others, so a lookup reads one word. The words are allocated at the polygon's first lookup
/// (2 KiB each: most regions of a large set are never near a given trace), and the edges are
/// kept from then on (at most 14 KiB more), so working a cell out projects nothing again. A
/// class holding that memory itself, so a lookup retains nothing. Not thread-safe: it belongs
/// to one monitor, used from one thread.
final class NearestEdgeGrid {
    /// An edge in local metres: its ends, and its direction with the inverse of its length
    /// squared (0 for a point), so that a distance from a cell's centre divides nothing.
    struct Edge {
        var ax, ay, bx, by: Double
        var dx, dy, inverseLengthSquared: Double

        init(ax: Double, ay: Double, bx: Double, by: Double) {
            let (dx, dy) = (bx - ax, by - ay)
            let lengthSquared = dx * dx + dy * dy
            self.init(
                ax: ax, ay: ay, bx: bx, by: by, dx: dx, dy: dy,
                inverseLengthSquared: lengthSquared > 0 ? 1 / lengthSquared : 0)
        }

        init(ax: Double, ay: Double, bx: Double, by: Double, dx: Double, dy: Double, inverseLengthSquared: Double) {
            (self.ax, self.ay, self.bx, self.by) = (ax, ay, bx, by)
            (self.dx, self.dy, self.inverseLengthSquared) = (dx, dy, inverseLengthSquared)
        }
    }

    /// The cells cover the polygon's bounding box widened by this many metres on every side:
    /// the widest hysteresis band, where most exact tests happen.
    static let margin = 100.0
    /// Cells along the longer side of the covered box.
    static let cellsAlongLongerSide = 16
    /// The most edges a cell lists.
    static let maximumListed = 7
    /// Edge numbers are stored in a byte each.
    static let maximumEdges = 255

    /// A cell's listed edge numbers.
    struct Listed: Sequence, IteratorProtocol {
        fileprivate var word: UInt64
        fileprivate var remaining: UInt64

        mutating func next() -> Int? {
            guard remaining > 0 else { return nil }
            remaining -= 1
            word >>= 8
            return Int(word & 0xFF)
        }
    }

    private let minX, minY, cellSize: Double
    private let columns, rows: Int
    /// Per cell (row-major): its count in the low byte (or `unknown`, `everyEdge`), then its
    /// edge numbers a byte each; nil before the first lookup. Read and set only in `lookup`,
    /// never during another access, so the run-time exclusivity check (2–3 % of the monitor)
    /// is left out.
    @exclusivity(unchecked) private var cells: UnsafeMutableBufferPointer<UInt64>?
    /// The edges, from the first lookup on (empty before): what cells are worked out from.
    @exclusivity(unchecked) private var edges: [Edge] = []
    private static let unknown: UInt64 = 0xFF
    private static let everyEdge: UInt64 = 0xFE

    /// Edges beyond `maximumEdges` are never listed: every lookup then measures every edge.
    /// The grid for these edges; they are asked for again (`lookup`'s `edges`) at the first
    /// lookup, so a polygon never looked up keeps the one copy.
    init(edges: [Edge]) {
        var box = (minX: Double.infinity, minY: Double.infinity, maxX: -Double.infinity, maxY: -Double.infinity)
        for edge in edges {
            box = (
                min(box.minX, edge.ax, edge.bx), min(box.minY, edge.ay, edge.by),
                max(box.maxX, edge.ax, edge.bx), max(box.maxY, edge.ay, edge.by)
            )
        }
        minX = box.minX - Self.margin
        minY = box.minY - Self.margin
        let width = box.maxX + Self.margin - minX
        let height = box.maxY + Self.margin - minY
        cellSize = max(width, height) / Double(Self.cellsAlongLongerSide)
        let usable = !edges.isEmpty && edges.count <= Self.maximumEdges && cellSize.isFinite && cellSize > 0
        columns = usable ? max(1, Int((width / cellSize).rounded(.up))) : 0
        rows = usable ? max(1, Int((height / cellSize).rounded(.up))) : 0
    }

    deinit {
        cells?.deallocate()
    }

    /// The edges that can be nearest to (x, y); nil when every edge must be measured (the point
    /// is outside the grid, or its cell has too many). `edges`, the ones the grid was made for,
    /// is called at the first lookup that falls in the grid.
    @inline(__always)
    func lookup(x: Double, y: Double, edges: () -> [Edge]) -> Listed? {
        let column = (x - minX) / cellSize
        let row = (y - minY) / cellSize
        // Truncation is the floor here: both are known to be at least 0.
        guard column >= 0, row >= 0, column < Double(columns), row < Double(rows) else { return nil }
        let cells = self.cells ?? allocateCells(edges: edges())
        let cell = Int(row) * columns + Int(column)
        if cells[cell] == Self.unknown { fill(cell, in: cells) }
        let word = cells[cell]
        if word == Self.everyEdge { return nil }
        return Listed(word: word, remaining: word & 0xFF)
    }

    private func allocateCells(edges: [Edge]) -> UnsafeMutableBufferPointer<UInt64> {
        let made = UnsafeMutableBufferPointer<UInt64>.allocate(capacity: columns * rows)
        made.initialize(repeating: Self.unknown)
        cells = made
        self.edges = edges
        return made
    }

    /// Works out a cell's edges: every edge no farther from the cell than the farthest any of
    /// its points is from the edge nearest the cell's centre.
    private func fill(_ cell: Int, in cells: UnsafeMutableBufferPointer<UInt64>) {
        let column = cell % columns
        let row = cell / columns
        let bounds = Cell(
            minX: minX + Double(column) * cellSize, minY: minY + Double(row) * cellSize,
            maxX: minX + Double(column + 1) * cellSize, maxY: minY + Double(row + 1) * cellSize)
        let centreX = (bounds.minX + bounds.maxX) / 2
        let centreY = (bounds.minY + bounds.maxY) / 2
        let halfDiagonal = cellSize * 0.5.squareRoot()
        cells[cell] = edges.withUnsafeBufferPointer { edges in
            // On the stack: a cell's working out allocates nothing.
            // Squared distances from the centre: no square root per edge (a cell is worked out
            // for every edge of its polygon).
            withUnsafeTemporaryAllocation(of: Double.self, capacity: edges.count) { fromCentreSquared in
                var nearest = 0
                for number in edges.indices {
                    fromCentreSquared[number] = Cell.pointToSegmentSquared(centreX, centreY, edges[number])
                    if fromCentreSquared[number] < fromCentreSquared[nearest] { nearest = number }
                }
                // Rounding in these bounds must never leave the nearest edge out.
                let reach = bounds.farthestDistance(to: edges[nearest]) * (1 + 1e-9) + 1e-6
                var word: UInt64 = 0
                var count: UInt64 = 0
                // An edge's distance to the cell is at least its centre's distance less half a
                // diagonal: only edges within reach plus half a diagonal of the centre (squared,
                // with a margin far wider than the rounding of either side) are measured.
                let within = (reach + halfDiagonal) * (1 + 1e-9)
                let withinSquared = within * within
                // Compared squared: no square root per edge measured (the reach's margin is far
                // wider than the rounding of either side).
                let reachSquared = reach * reach
                for number in edges.indices where fromCentreSquared[number] <= withinSquared {
                    guard bounds.distanceSquared(to: edges[number]) <= reachSquared else { continue }
                    guard count < UInt64(Self.maximumListed) else { return Self.everyEdge }
                    count += 1
                    word |= UInt64(number) << (8 * count)
                }
                return word | count
            }
        }
    }

    /// A cell's rectangle, sides included.
    private struct Cell {
        var minX, minY, maxX, maxY: Double

        /// The largest distance from a point of the cell to the edge: distance to a segment is
        /// convex, so it peaks at a corner.
        func farthestDistance(to edge: Edge) -> Double {
            max(
                Self.pointToSegment(minX, minY, edge), Self.pointToSegment(maxX, minY, edge),
                Self.pointToSegment(minX, maxY, edge), Self.pointToSegment(maxX, maxY, edge))
        }

        /// The square of the smallest distance from a point of the cell to the edge: 0 when
        /// they meet, else attained at a corner of the cell or an end of the edge.
        func distanceSquared(to edge: Edge) -> Double {
            if meets(edge) { return 0 }
            return min(
                Self.pointToSegmentSquared(minX, minY, edge), Self.pointToSegmentSquared(maxX, minY, edge),
                Self.pointToSegmentSquared(minX, maxY, edge), Self.pointToSegmentSquared(maxX, maxY, edge),
                distanceSquared(toPoint: edge.ax, edge.ay), distanceSquared(toPoint: edge.bx, edge.by))
        }

        private func distanceSquared(toPoint x: Double, _ y: Double) -> Double {
            let dx = max(minX - x, 0, x - maxX)
            let dy = max(minY - y, 0, y - maxY)
            return dx * dx + dy * dy
        }

        /// Whether the edge touches the rectangle: clips the segment's parameter range to each
        /// side's half-plane in turn (Liang–Barsky).
        private func meets(_ edge: Edge) -> Bool {
            // Most edges measured lie beside the cell, not across it: their box tells.
            guard max(edge.ax, edge.bx) >= minX, min(edge.ax, edge.bx) <= maxX, max(edge.ay, edge.by) >= minY,
                min(edge.ay, edge.by) <= maxY
            else { return false }
            let dx = edge.bx - edge.ax
            let dy = edge.by - edge.ay
            var low = 0.0
            var high = 1.0
            return Self.clip(-dx, edge.ax - minX, &low, &high) && Self.clip(dx, maxX - edge.ax, &low, &high)
                && Self.clip(-dy, edge.ay - minY, &low, &high) && Self.clip(dy, maxY - edge.ay, &low, &high)
        }

        /// Keeps the part `low...high` of the segment where p·t <= q; false once none is left.
        /// (The range is passed, not captured: a nested function's captured variables were
        /// checked for exclusive access at run time, on every call.)
        @inline(__always)
        private static func clip(_ p: Double, _ q: Double, _ low: inout Double, _ high: inout Double) -> Bool {
            if p == 0 { return q >= 0 }
            let t = q / p
            if p < 0 { low = max(low, t) } else { high = min(high, t) }
            return low <= high
        }

        static func pointToSegment(_ x: Double, _ y: Double, _ edge: Edge) -> Double {
            pointToSegmentSquared(x, y, edge).squareRoot()
        }

        /// The squared distance from a point to an edge, by the edge's inverse length: no
        /// division and no branch. Its rounding differs from the region's own distances, which
        /// is why every bound it enters carries a margin far wider than that.
        @inline(__always)
        static func pointToSegmentSquared(_ x: Double, _ y: Double, _ edge: Edge) -> Double {
            let along = ((x - edge.ax) * edge.dx + (y - edge.ay) * edge.dy) * edge.inverseLengthSquared
            let t = along > 1 ? 1 : (along < 0 ? 0 : along)
            let ex = edge.ax + t * edge.dx - x
            let ey = edge.ay + t * edge.dy - y
            return ex * ex + ey * ey
        }
    }
}
