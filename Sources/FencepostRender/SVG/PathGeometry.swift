/// Polylines and rings in pixels: simplified to what the eye can see, and written as SVG path
/// data.
enum PathGeometry {
    /// Douglas–Peucker: the fewest points that stay within `tolerance` pixels of the line.
    /// The first and last points are always kept. Iterative, so a long track cannot overflow
    /// the stack.
    static func simplify(_ points: [Point], tolerance: Double) -> [Point] {
        guard points.count > 2 else { return points }
        var keep = [Bool](repeating: false, count: points.count)
        keep[0] = true
        keep[points.count - 1] = true
        var stack = [(0, points.count - 1)]
        while let (first, last) = stack.popLast() {
            guard last > first + 1 else { continue }
            var farthest = first
            var distance = 0.0
            for index in (first + 1)..<last {
                let d = segmentDistance(points[index], points[first], points[last])
                if d > distance { (farthest, distance) = (index, d) }
            }
            if distance > tolerance {
                keep[farthest] = true
                stack.append((first, farthest))
                stack.append((farthest, last))
            }
        }
        return zip(points, keep).filter(\.1).map(\.0)
    }

    static func segmentDistance(_ p: Point, _ a: Point, _ b: Point) -> Double {
        let dx = b.x - a.x
        let dy = b.y - a.y
        let length = dx * dx + dy * dy
        guard length > 0 else { return p.distance(to: a) }
        let t = min(max(((p.x - a.x) * dx + (p.y - a.y) * dy) / length, 0), 1)
        return p.distance(to: Point(x: a.x + t * dx, y: a.y + t * dy))
    }

    /// `M x y L x y …`, closed with `Z` for a ring.
    static func data(_ points: [Point], closed: Bool) -> String {
        guard let first = points.first else { return "" }
        var text = "M\(px(first.x)) \(px(first.y))"
        for point in points.dropFirst() { text += "L\(px(point.x)) \(px(point.y))" }
        if closed { text += "Z" }
        return text
    }

    /// The box around points.
    static func box(_ points: [Point]) -> Box {
        var box = Box(minX: .infinity, minY: .infinity, maxX: -.infinity, maxY: -.infinity)
        for point in points { box.add(point) }
        return box
    }
}

/// An axis-aligned rectangle in pixels.
struct Box: Sendable, Hashable {
    var minX: Double
    var minY: Double
    var maxX: Double
    var maxY: Double

    var width: Double { maxX - minX }
    var height: Double { maxY - minY }
    var centre: Point { Point(x: (minX + maxX) / 2, y: (minY + maxY) / 2) }
    var isEmpty: Bool { !(minX <= maxX && minY <= maxY) }

    mutating func add(_ point: Point) {
        minX = min(minX, point.x)
        minY = min(minY, point.y)
        maxX = max(maxX, point.x)
        maxY = max(maxY, point.y)
    }

    func intersects(_ other: Box) -> Bool {
        minX < other.maxX && other.minX < maxX && minY < other.maxY && other.minY < maxY
    }

    func inside(width: Double, height: Double) -> Bool {
        minX >= 0 && minY >= 0 && maxX <= width && maxY <= height
    }
}
