import Foundation

/// Which kinds of thing a map shows, for its legend.
struct Legend {
    var regions = false
    var clusters = false
    var openVisits = false
    var refused = false
    var tracks = false
    var crossingTracks = false
    var dropped = false
    var kinds: Set<String> = []

    init(scene: MapScene, layout: RegionLayout) {
        regions = !layout.items.isEmpty
        clusters = !layout.clusters.isEmpty
        openVisits = !scene.openVisits.isEmpty
        refused = !(scene.refused?.features.isEmpty ?? true)
        tracks = scene.tracks.contains { $0.source == .fixes }
        crossingTracks = scene.tracks.contains { $0.source == .crossings }
        dropped = scene.tracks.contains { !$0.dropped.isEmpty }
        kinds = Set(scene.events.map(\.kind))
    }

    /// The legend's entries in a fixed order: a swatch kind and its text.
    var entries: [(swatch: String, text: String)] {
        var entries: [(String, String)] = []
        if regions { entries.append(("region", "region")) }
        if clusters { entries.append(("cluster", "cluster of small regions")) }
        if openVisits { entries.append(("open-visit", "open visit")) }
        if refused { entries.append(("refused", "refused feature (numbered below)")) }
        if tracks { entries.append(("track", "track (accepted fixes)")) }
        if crossingTracks { entries.append(("crossings", "crossings in time order")) }
        if dropped { entries.append(("dropped", "fix dropped by the filter")) }
        for kind in ["enter", "exit", "dwell", "overstay", "absent", "overspeed"] where kinds.contains(kind) {
            entries.append((kind, kind))
        }
        return entries
    }
}

/// The north arrow (top right), the scale bar (bottom left) and the legend (bottom right),
/// drawn over the map, outside the pan and zoom of the HTML form.
struct MapDecorations {
    let frame: MapFrame

    /// The scale bar's length in metres and pixels: 1, 2 or 5 × a power of ten, at most 120
    /// pixels, measured at the map's middle latitude.
    var scaleBar: (metres: Double, pixels: Double) {
        let perMetre = frame.pixelsPerMetre(atLatitude: frame.middleLatitude)
        let target = 120 / perMetre
        let power = pow(10, (log10(target)).rounded(.down))
        let step = [5.0, 2, 1].map { $0 * power }.first { $0 <= target } ?? power
        return (step, step * perMetre)
    }

    static func distanceText(_ metres: Double) -> String {
        metres >= 1_000 ? "\(px(metres / 1_000)) km" : "\(px(metres)) m"
    }

    /// Where the north arrow sits, so no label is placed under it.
    var boxes: [Box] {
        [Box(minX: frame.width - 44, minY: 0, maxX: frame.width, maxY: 56)]
    }

    /// The north arrow, on the map: web Mercator keeps north straight up.
    func draw(into svg: inout SVGDocument) {
        let x = frame.width - 24
        svg.start("g", ["class": "decorations north-arrow"])
        svg.element("path", ["d": "M\(px(x)) 12l8 26l-8 -6l-8 6Z"])
        svg.element("text", ["x": px(x), "y": "52", "text-anchor": "middle"], content: "N")
        svg.end()
        svg.newline()
    }

    /// Where the legend's entries go under the map: right of the scale bar, in rows.
    private func legendLayout(_ legend: Legend) -> [(entry: (swatch: String, text: String), x: Double, row: Int)] {
        var placed: [((String, String), Double, Int)] = []
        var x = Self.legendLeft
        var row = 0
        for entry in legend.entries {
            let width = 22 + Double(entry.text.count) * 11 * 0.6 + 16
            if x + width > frame.width - 8, x > Self.legendLeft {
                x = Self.legendLeft
                row += 1
            }
            placed.append((entry, x, row))
            x += width
        }
        return placed.map { (entry: $0.0, x: $0.1, row: $0.2) }
    }

    static let legendLeft = 230.0

    /// The height of the key (scale bar and legend) under the map.
    func keyHeight(_ legend: Legend) -> Double {
        Double((legendLayout(legend).last?.row ?? 0) + 1) * 18 + 18
    }

    /// The scale bar and the legend, in the band under the map (so they never cover it).
    func drawKey(into svg: inout SVGDocument, top: Double, legend: Legend) {
        let bar = scaleBar
        let y = 22.0
        svg.start(
            "g",
            [
                "class": "scale-bar", "transform": "translate(0 \(px(top)))", "data-metres": px(bar.metres),
                "data-pixels-per-metre": String(frame.pixelsPerMetre(atLatitude: frame.middleLatitude)),
            ])
        svg.element(
            "rect",
            [
                "class": "scale-back", "x": "12", "y": px(y - 14), "width": px(bar.pixels + 62), "height": "28",
                "rx": "3",
            ])
        svg.element("rect", ["class": "scale-dark", "x": "20", "y": px(y), "width": px(bar.pixels / 2), "height": "5"])
        svg.element(
            "rect",
            [
                "class": "scale-light", "x": px(20 + bar.pixels / 2), "y": px(y), "width": px(bar.pixels / 2),
                "height": "5",
            ])
        svg.element("text", ["x": px(20 + bar.pixels + 6), "y": px(y + 6)], content: Self.distanceText(bar.metres))
        svg.element("text", ["class": "scale-zero", "x": "20", "y": px(y - 3)], content: "0")
        svg.end()
        let layout = legendLayout(legend)
        guard !layout.isEmpty else { return }
        svg.start("g", ["class": "legend"])
        for (entry, x, row) in layout {
            let cy = top + 20 + Double(row) * 18
            let sx = x + 8
            // Swatches look like what they stand for, under classes of their own, so counting a
            // map's regions or events by class never counts the legend.
            switch entry.swatch {
            case "region", "open-visit", "refused":
                svg.element(
                    "rect",
                    [
                        "class": "swatch swatch-\(entry.swatch)", "x": px(sx - 7), "y": px(cy - 5), "width": "14",
                        "height": "10",
                    ])
            case "cluster":
                // As a cluster is drawn: a disc with its count, not a small region's dot.
                svg.element("circle", ["class": "swatch swatch-cluster", "cx": px(sx), "cy": px(cy), "r": "7.5"])
                svg.element("text", ["class": "swatch-cluster-count", "x": px(sx), "y": px(cy + 3.5)], content: "3")
            case "track", "crossings":
                svg.element(
                    "path",
                    [
                        "class": "swatch swatch-\(entry.swatch)", "stroke": MapRenderer.deviceColours[0],
                        "d": "M\(px(sx - 8)) \(px(cy))h16",
                    ])
            case "dropped":
                svg.element("circle", ["class": "swatch swatch-dropped", "cx": px(sx), "cy": px(cy), "r": "2"])
            default:
                svg.element(
                    "path",
                    [
                        "class": "swatch swatch-\(entry.swatch)",
                        "d": MapCanvas.marker(entry.swatch, at: Point(x: sx, y: cy)),
                    ])
            }
            svg.element("text", ["x": px(sx + 14), "y": px(cy + 4)], content: entry.text)
        }
        svg.end()
    }
}

/// The band under the map: the caption, notes on what was simplified, and a refused config's
/// problems, numbered as the marks on the map.
struct Footer {
    let lines: [(text: String, kind: String)]
    let width: Double

    /// The key (scale bar and legend) above the caption.
    let decorations: MapDecorations
    let legend: Legend

    init(scene: MapScene, decorations: MapDecorations, legend: Legend) {
        self.decorations = decorations
        self.legend = legend
        let width = decorations.frame.width
        var lines: [(String, String)] = []
        if let caption = scene.caption { lines.append((caption, "caption")) }
        if let refused = scene.refused {
            lines.append(
                (
                    "Refused: \(refused.problems.count) problem\(refused.problems.count == 1 ? "" : "s") in the region config",
                    "problem-head"
                ))
            for (index, problem) in refused.problems.prefix(100).enumerated() {
                lines.append(("\(index + 1). \(problem)", "problem"))
            }
            if refused.problems.count > 100 { lines.append(("… and \(refused.problems.count - 100) more", "problem")) }
        }
        self.lines = lines
        self.width = width
    }

    /// Lines wrap at about this many characters.
    var wrapAt: Int { Int(clamping: (width - 24) / (12 * 0.6), to: 20...100_000) }

    /// The notes are added when drawing; two lines are kept for them.
    var height: Double { decorations.keyHeight(legend) + Double(wrapped(lines).count + 2) * 17 + 12 }

    func wrapped(_ lines: [(text: String, kind: String)]) -> [(text: String, kind: String)] {
        lines.flatMap { line in Self.wrap(line.text, at: wrapAt).map { ($0, line.kind) } }
    }

    static func wrap(_ text: String, at limit: Int) -> [String] {
        var out: [String] = []
        var current = ""
        for word in text.split(separator: " ", omittingEmptySubsequences: false) {
            if !current.isEmpty, current.count + 1 + word.count > limit {
                out.append(current)
                current = "   " + word
            } else {
                current += current.isEmpty ? String(word) : " " + word
            }
        }
        out.append(current)
        return out
    }

    func draw(into svg: inout SVGDocument, top: Double, notes: [String]) {
        svg.start("g", ["class": "footer"])
        svg.element("rect", ["class": "footer-back", "y": px(top), "width": px(width), "height": px(height)])
        decorations.drawKey(into: &svg, top: top, legend: legend)
        let textTop = top + decorations.keyHeight(legend)
        let all = wrapped(lines + notes.prefix(2).map { ($0, "note") })
        for (row, line) in all.enumerated() {
            svg.element(
                "text", ["class": line.kind, "x": "12", "y": px(textTop + 14 + Double(row) * 17)], content: line.text)
        }
        svg.end()
        svg.newline()
    }
}
