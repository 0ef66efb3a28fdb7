import FencepostCore
import FencepostGeometry
import Foundation

/// Draws a ``MapScene`` as a self-contained SVG: Web Mercator fitted to what is shown, the
/// regions (true circles, polygons with holes, each labelled where its label fits), refused
/// features marked, tracks with their dropped fixes, event markers where boundaries were
/// crossed, open visits highlighted, a scale bar, a north arrow and a legend.
///
/// Elements carry what a test or a script needs to find them: `data-region-id` on each region's
/// shape, `data-event-id` on each event marker, `data-visit-id` on each open-visit highlight,
/// `data-device` on tracks; classes name what each element is (`region`, `event enter`, `track`).
/// The root carries the projection (`data-scale`, `data-origin-x`, `data-origin-y`: pixels per
/// EPSG:3857 metre and the top-left corner), so a page can add live points on the same map.
package struct MapRenderer: Sendable {
    package struct Options: Sendable {
        /// Width of the whole picture in pixels; the height follows the content.
        package var width: Double
        package var padding: Double
        /// Emit every label with the zoom from which it fits (the HTML page shows them as the
        /// user zooms in); when false only the labels that fit at the drawn scale are written.
        package var zoomableLabels: Bool

        package init(width: Double = 1200, padding: Double = 48, zoomableLabels: Bool = false) {
            self.width = width
            self.padding = padding
            self.zoomableLabels = zoomableLabels
        }
    }

    package let options: Options

    package init(options: Options = Options()) {
        self.options = options
    }

    static let fontSize = 11.0
    /// Past this many regions drawn as shapes, only those this many pixels across get a label.
    static let crowdedMap = 300
    static let labelledSize = 24.0
    static let deviceColours = ["#0f766e", "#c026d3", "#ea580c", "#4f46e5", "#65a30d", "#0369a1", "#be123c", "#a16207"]

    /// What drawing a scene produced: the SVG and the facts a caller may report.
    package struct Drawing: Sendable {
        package var svg: String
        package var frame: MapFrame
        /// Labels written (shown at the drawn scale) and labels in all.
        package var labelsShown: Int
        package var labelsTotal: Int
        /// Regions drawn inside clusters rather than as their own shape.
        package var clusteredRegions: Int
    }

    package func draw(_ scene: MapScene) -> Drawing {
        // Nothing to show: the world, so the picture still says where it would be.
        let bounds = scene.bounds ?? Envelope(minX: -180, minY: -60, maxX: 180, maxY: 75)
        let frame = MapFrame(fitting: bounds, width: options.width, padding: options.padding)
        var canvas = MapCanvas(scene: scene, frame: frame, options: options)
        return canvas.draw()
    }

    package func svg(_ scene: MapScene) -> String {
        draw(scene).svg
    }
}

/// One drawing in progress: the layers in order, bottom up.
struct MapCanvas {
    let scene: MapScene
    let frame: MapFrame
    let options: MapRenderer.Options
    let layout: RegionLayout
    var svg = SVGDocument()
    var labels: [LabelPlacer.Request] = []
    /// Per label request: what it names (a `region`, a `device` or a `refused` feature) and its id.
    var labelTargets: [(kind: String, id: String)] = []
    /// Where problems are marked: no label covers them.
    var problemMarks: [Point] = []
    let legend: Legend

    init(scene: MapScene, frame: MapFrame, options: MapRenderer.Options) {
        self.scene = scene
        self.frame = frame
        self.options = options
        self.layout = RegionLayout(regions: scene.regions, frame: frame)
        self.legend = Legend(scene: scene, layout: layout)
    }

    mutating func draw() -> MapRenderer.Drawing {
        let decorations = MapDecorations(frame: frame)
        let footer = Footer(scene: scene, decorations: decorations, legend: legend)
        let totalHeight = frame.height + footer.height
        svg.raw(#"<?xml version="1.0" encoding="UTF-8"?>"#)
        svg.newline()
        svg.start(
            "svg",
            [
                "xmlns": "http://www.w3.org/2000/svg", "width": px(frame.width), "height": px(totalHeight),
                "viewBox": "0 0 \(px(frame.width)) \(px(totalHeight))", "class": "fencepost-map",
                "data-projection": "EPSG:3857", "data-scale": String(frame.scale),
                "data-origin-x": String(frame.originX),
                "data-origin-y": String(frame.originY), "data-map-width": px(frame.width),
                "data-map-height": px(frame.height),
            ])
        svg.element("title", content: scene.caption ?? "Fencepost map")
        svg.element("style", content: MapStyle.css)
        svg.raw(
            #"<defs><clipPath id="map-clip"><rect width="\#(px(frame.width))" height="\#(px(frame.height))"/></clipPath></defs>"#
        )
        svg.element("rect", ["class": "background", "width": px(frame.width), "height": px(frame.height)])
        svg.newline()
        svg.start("g", ["clip-path": "url(#map-clip)"])
        svg.start("g", ["class": "viewport"])
        svg.element("g", ["class": "basemap"])
        drawRegions()
        drawRefused()
        drawOpenVisits()
        drawTracks()
        drawEvents()
        let (shown, total) = drawLabels()
        svg.end()
        svg.end()
        svg.element(
            "rect",
            ["class": "frame", "x": "0.5", "y": "0.5", "width": px(frame.width - 1), "height": px(frame.height - 1)])
        svg.newline()
        decorations.draw(into: &svg)
        var notes: [String] = []
        if total > shown {
            notes.append(
                "\(shown) of \(total) labels shown"
                    + (options.zoomableLabels
                        ? "; zoom in for the rest"
                        : "; the others would overlap or label specks (the HTML form shows them as you zoom)"))
        }
        let clustered = layout.clusters.reduce(0) { $0 + $1.members.count }
        if clustered > 0 {
            notes.append(
                "\(clustered) regions too small to see at this scale are drawn as \(layout.clusters.count) numbered clusters"
            )
        }
        footer.draw(into: &svg, top: frame.height, notes: notes)
        svg.end()
        svg.newline()
        return MapRenderer.Drawing(
            svg: svg.text, frame: frame, labelsShown: shown, labelsTotal: total, clusteredRegions: clustered)
    }

    // MARK: - Regions

    private var openRegions: Set<String> { Set(scene.openVisits.map(\.regionID)) }

    private mutating func drawRegions() {
        let open = openRegions
        // Many overlapping fills would turn solid: a crowded map draws fainter shapes.
        svg.start("g", ["class": layout.items.count > MapRenderer.crowdedMap ? "regions crowded" : "regions"])
        for item in layout.items {
            let region = item.region
            var classes = ["region", region.shape.kind]
            if item.isDot { classes.append("region-dot") }
            if !region.settings.enabled { classes.append("disabled") }
            if open.contains(region.id) { classes.append("has-open-visit") }
            if item.isDot { classes.append("fixed-size") }
            drawShape(
                item.shape, attributes: ["class": classes.joined(separator: " "), "data-region-id": region.id],
                title: Self.title(of: region),
                fixedSize: item.isDot)
            let text = region.name ?? region.id
            labels.append(
                LabelPlacer.Request(
                    text: text, spots: Self.spots(around: item.shape, text: text), minZoom: labelFloor(item.shape)))
            labelTargets.append(("region", region.id))
        }
        svg.end()
        svg.newline()
        if !layout.clusters.isEmpty {
            svg.start("g", ["class": "clusters"])
            for cluster in layout.clusters {
                let count = cluster.members.count
                let radius = 7 + 3 * log10(Double(count))
                svg.start(
                    "g",
                    [
                        "class": "region-cluster fixed-size", "data-region-count": String(count),
                        "data-region-ids": cluster.members.map(\.id).joined(separator: " "),
                        "transform": "translate(\(px(cluster.center.x)) \(px(cluster.center.y)))",
                    ])
                let names = cluster.members.prefix(8).map { $0.name ?? $0.id }.joined(separator: ", ")
                svg.element("title", content: "\(count) regions: \(names)\(count > 8 ? ", …" : "")")
                svg.element("circle", ["r": px(radius)])
                svg.element("text", ["y": "3.5"], content: String(count))
                svg.end()
            }
            svg.end()
            svg.newline()
        }
    }

    /// On a crowded map (hundreds of regions) a region is labelled only from the zoom at
    /// which it is at least ``MapRenderer/labelledSize`` pixels across: a label for every
    /// speck would bury the map.
    func labelFloor(_ shape: DrawnShape) -> Double {
        guard layout.items.count > MapRenderer.crowdedMap else { return 1 }
        let size = max(shape.box.width, shape.box.height, 0.1)
        return LabelPlacer.zoomLevels.first { $0 * size >= MapRenderer.labelledSize } ?? LabelPlacer.zoomLevels.last!
    }

    /// A shape; with `fixedSize`, a circle is drawn around the origin and moved into place by
    /// its transform, so the HTML form can keep it the same size on screen at any zoom.
    mutating func drawShape(
        _ shape: DrawnShape, attributes: KeyValuePairs<String, String?>, title: String?, fixedSize: Bool = false
    ) {
        var list = Array(attributes)
        switch shape.form {
        case .circle(let center, let radius) where fixedSize:
            list += [("transform", "translate(\(px(center.x)) \(px(center.y)))"), ("r", px(max(radius, 0.5)))]
            emit("circle", list, title: title)
        case .circle(let center, let radius):
            list += [("cx", px(center.x)), ("cy", px(center.y)), ("r", px(max(radius, 0.5)))]
            emit("circle", list, title: title)
        case .path(let data):
            list += [("d", data), ("fill-rule", "evenodd")]
            emit("path", list, title: title)
        }
    }

    /// An element with its attributes in order and, when given, a `<title>` (a browser's
    /// tooltip).
    mutating func emit(_ name: String, _ attributes: [(String, String?)], title: String?) {
        var text = "<\(name)"
        for (key, value) in attributes {
            if let value { text += " \(key)=\"\(SVGDocument.escape(value))\"" }
        }
        if let title {
            text += "><title>\(SVGDocument.escape(title))</title></\(name)>"
        } else {
            text += "/>"
        }
        svg.raw(text)
    }

    static func title(of region: Region) -> String {
        var parts = [region.name.map { "\($0) (\(region.id))" } ?? region.id]
        if case .circle(_, let radius) = region.shape {
            parts.append("circle, radius \(px(radius)) m")
        } else if case .corridor(let corridor) = region.shape {
            parts.append("corridor, \(px(corridor.buffer)) m either side of its line")
        } else {
            parts.append(region.shape.kind)
        }
        if !region.tags.isEmpty { parts.append("tags: " + region.tags.joined(separator: ", ")) }
        if !region.settings.enabled { parts.append("disabled") }
        return parts.joined(separator: " · ")
    }

    /// Where a region's label may go: inside a shape roomy enough for it, else right of it,
    /// left, above or below.
    static func spots(around shape: DrawnShape, text: String, inside: Bool = true) -> [LabelPlacer.Spot] {
        let box = shape.box
        let gap = 3.0
        let middle = box.centre
        var spots = [
            LabelPlacer.Spot(at: Point(x: box.maxX + gap, y: middle.y + 4), anchor: "start"),
            LabelPlacer.Spot(at: Point(x: box.minX - gap, y: middle.y + 4), anchor: "end"),
            LabelPlacer.Spot(at: Point(x: middle.x, y: box.minY - gap - 1), anchor: "middle"),
            LabelPlacer.Spot(at: Point(x: middle.x, y: box.maxY + gap + 9), anchor: "middle"),
        ]
        if inside, let point = shape.labelPoint {
            spots.insert(LabelPlacer.Spot(at: Point(x: point.x, y: point.y + 4), anchor: "middle"), at: 0)
        } else if inside, box.width > Double(text.count) * MapRenderer.fontSize * 0.6 + 8,
            box.height > MapRenderer.fontSize * 2
        {
            spots.insert(LabelPlacer.Spot(at: Point(x: middle.x, y: middle.y + 4), anchor: "middle"), at: 0)
        }
        return spots
    }
}
