import Dispatch

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
        let packed = Self.tileOrder(envelopes)
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
            let level = Self.tileOrder(grouped.map(\.box)).map { grouped[$0] }
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

    /// Sort-Tile-Recursive order of `boxes`, as their positions: by centre x into slices of
    /// about √(n / fanout) groups each, each slice by centre y, so consecutive runs of `fanout`
    /// are compact tiles. The centres are worked out once and sorted beside their positions (not
    /// looked up through the positions at every comparison), and the slices are sorted across
    /// the cores when there are many boxes (a million regions' sorts were 0.4 s of a service's
    /// start-up, on one core). Boxes with the same centre may come in any order: a
    /// query's answer is sorted, whatever the tree's shape.
    private static func tileOrder(_ boxes: [Envelope]) -> [Int] {
        let groups = (boxes.count + fanout - 1) / fanout
        let slices = max(1, Int(Double(groups).squareRoot().rounded(.up)))
        let perSlice = max(((groups + slices - 1) / slices) * fanout, 1)
        var centres = boxes.enumerated().map { position, box in
            Centre(x: (box.minX + box.maxX) / 2, y: (box.minY + box.maxY) / 2, position: Int32(position))
        }
        centres.sort { $0.x < $1.x }
        let starts = Array(stride(from: 0, to: centres.count, by: perSlice))
        centres.withUnsafeMutableBufferPointer { buffer in
            let shared = SharedSlices(buffer: buffer)
            let sortSlice = { @Sendable (number: Int) in
                let start = starts[number]
                var slice = UnsafeMutableBufferPointer(
                    rebasing: shared.buffer[start..<min(start + perSlice, shared.buffer.count)])
                slice.sort { $0.y < $1.y }
            }
            if boxes.count >= parallelBelow {
                DispatchQueue.concurrentPerform(iterations: starts.count, execute: sortSlice)
            } else {
                starts.indices.forEach(sortSlice)
            }
        }
        return centres.map { Int($0.position) }
    }

    /// Fewer boxes than this are tiled on the calling thread.
    static let parallelBelow = 16_384

    /// A box's centre and its position in the array tiled.
    private struct Centre {
        var x: Double
        var y: Double
        var position: Int32
    }

    /// The centres' storage, lent to the slices' sorts for the duration of one
    /// `concurrentPerform`: each sort writes only its own slice, and none outlives the call.
    private struct SharedSlices: @unchecked Sendable {
        let buffer: UnsafeMutableBufferPointer<Centre>
    }
}
