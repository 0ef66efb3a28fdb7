import FencepostCore
import FencepostGeometry
import Foundation

/// A region's outline in pixels: a circle where Mercator leaves it one, else a path (rings
/// with holes, drawn with the even-odd rule).
struct DrawnShape {
    enum Form {
        case circle(center: Point, radius: Double)
        case path(String)
    }

    var form: Form
    var box: Box
    /// Where a label inside the shape goes when the box's centre may lie outside it (a
    /// corridor's: halfway along its line).
    var labelPoint: Point?
}

/// How the regions of a map are drawn at its scale: each big enough to see as its own shape;
/// those too small to see as a dot, or, where many crowd together, as one cluster with their
/// count. So 10,000 regions stay legible.
struct RegionLayout {
    /// A region drawn on its own.
    struct Item {
        var region: Region
        var shape: DrawnShape
        /// Drawn as a dot: the region is smaller than ``RegionLayout/smallest`` pixels.
        var isDot: Bool
    }

    /// Small regions crowded into one grid cell.
    struct Cluster {
        var members: [Region]
        var center: Point
    }

    /// Regions smaller than this many pixels across are dots or clusters.
    static let smallest = 8.0
    /// Cells of this many pixels group small regions; a cell holding more than `crowd` of them
    /// becomes a cluster.
    static let clusterCell = 36.0
    static let crowd = 3
    static let dotRadius = 2.5

    var items: [Item] = []
    var clusters: [Cluster] = []

    /// The cluster cell a coordinate (pixels) falls in; far outside the page (or not finite),
    /// the outermost cell, so no coordinate can trap the conversion.
    static func cellIndex(_ value: Double) -> Int64 {
        let index = (value / clusterCell).rounded(.down)
        guard !index.isNaN else { return 0 }
        return Int64(min(max(index, -1e12), 1e12))
    }

    init(regions: [Region], frame: MapFrame) {
        var small: [Int64: [(Region, Point)]] = [:]
        for region in regions {
            let shape = Self.shape(of: region.shape, frame: frame)
            if max(shape.box.width, shape.box.height) >= Self.smallest {
                items.append(Item(region: region, shape: shape, isDot: false))
            } else {
                let centre = shape.box.centre
                let key = Self.cellIndex(centre.x) &* 1_000_003 &+ Self.cellIndex(centre.y)
                small[key, default: []].append((region, centre))
            }
        }
        // Largest first, so small shapes are drawn over big ones and stay clickable.
        items.sort { $0.shape.box.width * $0.shape.box.height > $1.shape.box.width * $1.shape.box.height }
        for key in small.keys.sorted() {
            let members = small[key]!
            if members.count <= Self.crowd {
                for (region, centre) in members {
                    let box = Box(
                        minX: centre.x - Self.dotRadius, minY: centre.y - Self.dotRadius,
                        maxX: centre.x + Self.dotRadius,
                        maxY: centre.y + Self.dotRadius)
                    items.append(
                        Item(
                            region: region,
                            shape: DrawnShape(form: .circle(center: centre, radius: Self.dotRadius), box: box),
                            isDot: true))
                }
            } else {
                let x = members.map(\.1.x).reduce(0, +) / Double(members.count)
                let y = members.map(\.1.y).reduce(0, +) / Double(members.count)
                clusters.append(Cluster(members: members.map(\.0), center: Point(x: x, y: y)))
            }
        }
    }

    /// The outline of a region's shape on the frame.
    static func shape(of shape: RegionShape, frame: MapFrame) -> DrawnShape {
        switch shape {
        case .circle(let center, let radius):
            let middle = frame.point(center)
            let pixels = radius * frame.pixelsPerMetre(atLatitude: center.lat)
            if GeodesicCircle.distortion(center: center, radius: radius, radiusPixels: pixels) < 0.25 {
                let box = Box(
                    minX: middle.x - pixels, minY: middle.y - pixels, maxX: middle.x + pixels, maxY: middle.y + pixels)
                return DrawnShape(form: .circle(center: middle, radius: pixels), box: box)
            }
            let count = Int(clamping: pixels / 2, to: 48...360)
            let ring = GeodesicCircle.ring(center: center, radius: radius, count: count).map(frame.point)
            return DrawnShape(form: .path(PathGeometry.data(ring, closed: true)), box: PathGeometry.box(ring))
        case .area(let area):
            return rings(area.rings, frame: frame)
        case .corridor(let corridor):
            var drawn = rings(corridor.outline.rings, frame: frame)
            drawn.labelPoint = frame.point(Self.halfway(along: corridor.line))
            return drawn
        }
    }

    /// The point halfway along a line, by length in lon/lat scaled to the line's latitude.
    static func halfway(along line: [Position]) -> Position {
        let scale = cos(line[0].lat * .pi / 180)
        let lengths = zip(line, line.dropFirst()).map { a, b in
            (((b.lon - a.lon) * scale) * ((b.lon - a.lon) * scale) + (b.lat - a.lat) * (b.lat - a.lat)).squareRoot()
        }
        var rest = lengths.reduce(0, +) / 2
        for (index, length) in lengths.enumerated() {
            if rest <= length, length > 0 {
                let a = line[index]
                let b = line[index + 1]
                let fraction = rest / length
                return Position(lon: a.lon + (b.lon - a.lon) * fraction, lat: a.lat + (b.lat - a.lat) * fraction)
            }
            rest -= length
        }
        return line[line.count / 2]
    }

    /// Rings projected and simplified to a third of a pixel; rings that shrink below a pixel
    /// (a tiny hole) are left out, the shell never.
    static func rings(_ rings: [[Position]], frame: MapFrame) -> DrawnShape {
        var data = ""
        var box = Box(minX: .infinity, minY: .infinity, maxX: -.infinity, maxY: -.infinity)
        for (index, ring) in rings.enumerated() {
            let projected = ring.map(frame.point)
            let ringBox = PathGeometry.box(projected)
            if index > 0, max(ringBox.width, ringBox.height) < 1 { continue }
            var simplified = PathGeometry.simplify(projected, tolerance: 0.33)
            if simplified.count > 1, simplified.first == simplified.last { simplified.removeLast() }
            data += PathGeometry.data(simplified, closed: true)
            for point in projected { box.add(point) }
        }
        return DrawnShape(form: .path(data), box: box)
    }
}
