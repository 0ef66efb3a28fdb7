/// Places labels so none overlaps another: greedily, in priority order, each at the first of
/// its candidate spots that is free. It does so at zoom 1, 2, 4… (label text keeps its size on
/// screen while the map grows), so each label also learns the zoom from which it fits: the
/// SVG shows the labels that fit at zoom 1, the HTML page shows more as the user zooms in.
struct LabelPlacer {
    /// A spot for a label: where its text is anchored and how (`start`, `middle`, `end`).
    struct Spot: Sendable, Hashable {
        var at: Point
        var anchor: String
    }

    struct Request {
        var text: String
        var spots: [Spot]
        /// The label is not shown below this zoom, even where it would fit.
        var minZoom: Double = 1
    }

    struct Placement {
        var request: Int
        var spot: Spot
        /// The smallest zoom level at which the label is shown.
        var minZoom: Double
    }

    static let zoomLevels: [Double] = [1, 2, 4, 8, 16, 32, 64]
    let fontSize: Double
    let width: Double
    let height: Double
    /// Boxes no label may cover at zoom 1 (the north arrow).
    var obstacles: [Box] = []
    /// Markers of fixed size on screen no label may cover at any zoom: their place on the map
    /// and half their size in pixels.
    var markers: [(at: Point, radius: Double)] = []

    /// Roughly how wide `text` is set in a sans-serif face at `fontSize`.
    func textWidth(_ text: String) -> Double {
        Double(text.count) * fontSize * 0.6
    }

    func box(of text: String, at spot: Spot, zoom: Double) -> Box {
        let width = textWidth(text)
        let x = spot.at.x * zoom
        let y = spot.at.y * zoom
        let left: Double
        switch spot.anchor {
        case "end": left = x - width
        case "middle": left = x - width / 2
        default: left = x
        }
        // The anchor is the baseline; descenders reach a little below it.
        return Box(minX: left - 1, minY: y - fontSize * 0.8 - 1, maxX: left + width + 1, maxY: y + fontSize * 0.25 + 1)
    }

    /// Where each label goes; labels that fit at no zoom level are left out.
    func place(_ requests: [Request]) -> [Placement] {
        var placed: [Int: Placement] = [:]
        for zoom in Self.zoomLevels {
            var grid = BoxGrid(cell: 64)
            if zoom == 1 { for obstacle in obstacles { grid.insert(obstacle) } }
            for marker in markers {
                let x = marker.at.x * zoom
                let y = marker.at.y * zoom
                let r = marker.radius
                grid.insert(Box(minX: x - r, minY: y - r, maxX: x + r, maxY: y + r))
            }
            // Labels shown at a lower zoom keep their spot.
            for placement in placed.values {
                grid.insert(box(of: requests[placement.request].text, at: placement.spot, zoom: zoom))
            }
            for (index, request) in requests.enumerated() where placed[index] == nil && request.minZoom <= zoom {
                for spot in request.spots {
                    let candidate = box(of: request.text, at: spot, zoom: zoom)
                    if zoom == 1, !candidate.inside(width: width, height: height) { continue }
                    if grid.intersects(candidate) { continue }
                    grid.insert(candidate)
                    placed[index] = Placement(request: index, spot: spot, minZoom: zoom)
                    break
                }
            }
        }
        return placed.values.sorted { $0.request < $1.request }
    }
}

/// Boxes bucketed by a square grid, for fast overlap tests. Total on any box: one spanning more
/// than ``widest`` cells a side (or not finite) is kept in a list of its own that every test
/// looks at, instead of in millions of buckets.
struct BoxGrid {
    let cell: Double
    private var buckets: [Int64: [Box]] = [:]
    private var large: [Box] = []
    /// Cells a side past which a box is kept whole in `large`.
    static let widest: Int64 = 64

    init(cell: Double) {
        self.cell = cell
    }

    mutating func insert(_ box: Box) {
        guard let keys = cells(box) else {
            large.append(box)
            return
        }
        // The keys first: mutating the buckets from inside a closure over `self` would copy them.
        for key in keys { buckets[key, default: []].append(box) }
    }

    func intersects(_ box: Box) -> Bool {
        if large.contains(where: { $0.intersects(box) }) { return true }
        guard let keys = cells(box) else {
            return buckets.values.contains { $0.contains { $0.intersects(box) } }
        }
        return keys.contains { key in buckets[key]?.contains { $0.intersects(box) } ?? false }
    }

    /// The keys of the cells `box` covers; nil when they are too many (or not countable).
    private func cells(_ box: Box) -> [Int64]? {
        func index(_ value: Double) -> Int64? {
            let index = (value / cell).rounded(.down)
            return abs(index) < 1e12 ? Int64(index) : nil
        }
        guard let x0 = index(box.minX), let x1 = index(box.maxX), let y0 = index(box.minY), let y1 = index(box.maxY),
            x0 <= x1, y0 <= y1, x1 - x0 < Self.widest, y1 - y0 < Self.widest
        else { return nil }
        var keys: [Int64] = []
        for x in x0...x1 {
            for y in y0...y1 { keys.append(x &* 1_000_003 &+ y) }
        }
        return keys
    }
}
