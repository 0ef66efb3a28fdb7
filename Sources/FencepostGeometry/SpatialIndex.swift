/// A static R-tree over envelopes, answering "which items' boxes touch this box".
///
/// Packed once by Sort-Tile-Recursive (boxes sorted into vertical slices by centre x, each slice
/// by centre y, then grouped `fanout` at a time, level after level) and never changed. Items are
/// identified by their position in the array the index was built from, so callers keep their own
/// array of regions and get indices back. Plain Swift arrays: a query allocates at most its answer
/// (GEOS's STRtree, used before, cost a geometry, a callback per hit and a sort per query, more
/// than the monitor's per-fix work when the device moves fast).
public struct SpatialIndex: Sendable {
    /// Children per node.
    static let fanout = 8

    private struct Node: Sendable {
        var box: Envelope
        /// The node's children: boxes in the level below (for the lowest level, items).
        var children: Range<Int32>
    }

    public let count: Int
    /// The items' boxes in packed order, and each one's index in the array given.
    private let itemBoxes: [Envelope]
    private let itemIndices: [Int]
    /// Every level of nodes, the lowest (over the items) first, one after another; a node's
    /// children are numbered within the level below. The last level has at most `fanout`.
    private let nodes: [Node]
    /// Where each level starts in `nodes`, and where the last ends.
    private let levelStarts: [Int]

    /// Builds the index over `envelopes`; item `i` is `envelopes[i]`.
    public init(envelopes: [Envelope]) {
        count = envelopes.count
        let packed = Self.tileOrder(Array(envelopes.indices)) { envelopes[$0] }
        itemIndices = packed
        itemBoxes = packed.map { envelopes[$0] }
        var levels: [[Node]] = []
        var below = itemBoxes
        while below.count > Self.fanout || levels.isEmpty {
            let grouped = stride(from: 0, to: below.count, by: Self.fanout).map { start -> Node in
                let end = min(start + Self.fanout, below.count)
                let box = below[(start + 1)..<end].reduce(below[start]) { $0.union($1) }
                return Node(box: box, children: Int32(start)..<Int32(end))
            }
            // A level's nodes are tiled in turn; each keeps its own range of children.
            let level = Self.tileOrder(grouped) { $0.box }
            levels.append(level)
            below = level.map(\.box)
        }
        nodes = levels.flatMap { $0 }
        levelStarts = levels.reduce(into: [0]) { starts, level in starts.append(starts.last! + level.count) }
    }

    /// Indices of the items whose envelopes intersect `envelope` (boundaries included), in
    /// ascending order.
    public func query(_ envelope: Envelope) -> [Int] {
        var hits: [Int] = []
        query(envelope, into: &hits)
        return hits
    }

    /// The same answer into `hits`, replacing what it held (its memory is reused).
    public func query(_ envelope: Envelope, into hits: inout [Int]) {
        hits.removeAll(keepingCapacity: true)
        let top = levelStarts.count - 2
        collect(level: top, nodes: 0..<(levelStarts[top + 1] - levelStarts[top]), touching: envelope, into: &hits)
        hits.sort()
    }

    /// Indices of the items whose envelopes contain the point (x, y).
    public func query(x: Double, y: Double) -> [Int] {
        query(Envelope(minX: x, minY: y, maxX: x, maxY: y))
    }

    /// Adds the items under the level's `numbers` nodes that touch `box`.
    private func collect(level: Int, nodes numbers: Range<Int>, touching box: Envelope, into hits: inout [Int]) {
        let start = levelStarts[level]
        for number in numbers {
            let node = nodes[start + number]
            guard node.box.intersects(box) else { continue }
            let children = Int(node.children.lowerBound)..<Int(node.children.upperBound)
            if level == 0 {
                for item in children where itemBoxes[item].intersects(box) { hits.append(itemIndices[item]) }
            } else {
                collect(level: level - 1, nodes: children, touching: box, into: &hits)
            }
        }
    }

    /// Sort-Tile-Recursive order: by centre x into slices of about √(n / fanout) groups each,
    /// each slice by centre y, so consecutive runs of `fanout` are compact tiles.
    private static func tileOrder<Element>(_ elements: [Element], box: (Element) -> Envelope) -> [Element] {
        let groups = (elements.count + fanout - 1) / fanout
        let slices = max(1, Int(Double(groups).squareRoot().rounded(.up)))
        let perSlice = ((groups + slices - 1) / slices) * fanout
        func centre(_ element: Element) -> (x: Double, y: Double) {
            let envelope = box(element)
            return ((envelope.minX + envelope.maxX) / 2, (envelope.minY + envelope.maxY) / 2)
        }
        let byX = elements.sorted { centre($0).x < centre($1).x }
        return stride(from: 0, to: byX.count, by: max(perSlice, 1)).flatMap { start in
            byX[start..<min(start + perSlice, byX.count)].sorted { centre($0).y < centre($1).y }
        }
    }
}
