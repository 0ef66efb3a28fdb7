import FencepostCore
import FencepostGeometry
import Foundation

/// What a map draws over its regions: a refused config's features with their problems, and
/// open visits.
extension MapCanvas {
    // MARK: - Refused features

    mutating func drawRefused() {
        guard let refused = scene.refused, !refused.features.isEmpty else { return }
        svg.start("g", ["class": "refused"])
        for feature in refused.features {
            let numbers = feature.numbers.map(String.init).joined(separator: ",")
            let title = feature.numbers.map { refused.problems[$0 - 1] }.joined(separator: "\n")
            var box: Box
            if let circle = feature.circle {
                let centre = frame.point(circle.center)
                let radius = max(circle.radius * frame.pixelsPerMetre(atLatitude: circle.center.lat), 4)
                emit(
                    "circle",
                    [
                        ("class", "refused-shape"), ("data-feature", "\(feature.file)#\(feature.index)"),
                        ("data-problems", numbers),
                        ("cx", px(centre.x)), ("cy", px(centre.y)), ("r", px(radius)),
                    ], title: title)
                box = Box(
                    minX: centre.x - radius, minY: centre.y - radius, maxX: centre.x + radius, maxY: centre.y + radius)
            } else {
                // Drawn as written, open rings included: the user should see the shape they wrote.
                var data = ""
                box = Box(minX: .infinity, minY: .infinity, maxX: -.infinity, maxY: -.infinity)
                for ring in feature.rings {
                    let points = ring.map(frame.point)
                    data += PathGeometry.data(points, closed: ring.first == ring.last)
                    for point in points { box.add(point) }
                }
                emit(
                    "path",
                    [
                        ("class", "refused-shape"), ("data-feature", "\(feature.file)#\(feature.index)"),
                        ("data-problems", numbers),
                        ("d", data), ("fill-rule", "evenodd"),
                    ], title: title)
            }
            let name = feature.id ?? "feature \(feature.index)"
            // Outside the shape: its middle is where the problem's cross usually is.
            labels.append(
                LabelPlacer.Request(
                    text: name,
                    spots: Self.spots(around: DrawnShape(form: .path(""), box: box), text: name, inside: false)))
            labelTargets.append(("refused", name))
            let marks =
                feature.marks.isEmpty
                ? [frame.point(Self.unproject(box.centre, frame))] : feature.marks.map(frame.point)
            for mark in marks {
                problemMarks.append(mark)
                svg.start(
                    "g",
                    [
                        "class": "problem-mark fixed-size", "data-problems": numbers,
                        "transform": "translate(\(px(mark.x)) \(px(mark.y)))",
                    ])
                svg.element("title", content: title)
                svg.element("path", ["d": "M-7 -7l14 14m0 -14l-14 14"])
                svg.element("text", ["x": "9", "y": "-7"], content: numbers)
                svg.end()
            }
        }
        svg.end()
        svg.newline()
    }

    /// The lon/lat of a pixel (for a mark at a shape's middle).
    static func unproject(_ point: Point, _ frame: MapFrame) -> Position {
        let x = point.x / frame.scale + frame.originX
        let y = frame.originY - point.y / frame.scale
        let lat = (2 * atan(exp(y / WebMercator.radius)) - .pi / 2) * 180 / .pi
        return Position(lon: x / WebMercator.radius * 180 / .pi, lat: lat)
    }

    // MARK: - Open visits

    mutating func drawOpenVisits() {
        guard !scene.openVisits.isEmpty else { return }
        // Dots and clusters stand for regions too small to see: their highlight is a ring
        // of fixed size around them.
        var shapes: [String: (shape: DrawnShape, fixed: Bool)] = [:]
        for item in layout.items { shapes[item.region.id] = (item.shape, item.isDot) }
        for cluster in layout.clusters {
            for member in cluster.members {
                let ring = DrawnShape(
                    form: .circle(center: cluster.center, radius: 9), box: Box(minX: 0, minY: 0, maxX: 0, maxY: 0))
                shapes[member.id] = (ring, true)
            }
        }
        svg.start("g", ["class": "open-visits"])
        for visit in scene.openVisits {
            guard case (var shape, let fixed)? = shapes[visit.regionID] else { continue }
            if case .circle(let centre, let radius) = shape.form {
                shape.form = .circle(center: centre, radius: radius + 2)
            }
            drawShape(
                shape,
                attributes: [
                    "class": fixed ? "open-visit fixed-size" : "open-visit", "data-visit-id": visit.id,
                    "data-device": visit.device,
                    "data-region": visit.regionID,
                ],
                title:
                    "open visit of \(visit.device) in \(visit.regionID) since \(Timestamp.format(seconds: visit.enteredAt))",
                fixedSize: fixed)
        }
        svg.end()
        svg.newline()
    }
}
