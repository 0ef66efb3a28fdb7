import FencepostCore
import Foundation

/// Draws a ``TimelineScene`` as SVG: one row per region (per region and device when there are
/// several devices) with its visits as bars over time (open visits running to the device's last
/// fix, pass-throughs and gap-flagged crossings marked), then rows for steps per day, sleep
/// nights and workouts when there are any. Each visit bar carries `data-visit-id`, each health
/// bar `data-event-id`. Over more than half a year visits would be slivers: each row shows
/// instead the time inside per week (per month past three years), darker for longer.
package struct TimelineRenderer: Sendable {
    package var width: Double

    package init(width: Double = 1200) {
        self.width = width
    }

    static let labelWidth = 210.0
    static let rowHeight = 22.0
    static let top = 46.0
    static let healthRows = ["steps", "sleep", "workout"]
    static let healthTitles = ["steps": "steps per day", "sleep": "sleep", "workout": "workouts"]

    package func svg(_ scene: TimelineScene) -> String {
        let regionRows = Self.regionRows(scene)
        let healthRows = Self.healthRows.filter { row in scene.health.contains { $0.row == row } }
        let (start, end) = Self.span(scene)
        let plotLeft = Self.labelWidth
        let plotWidth = max(width - Self.labelWidth - 20, 100)
        let axis = TimeAxis(start: start, end: end, target: Int(clamping: plotWidth / 110, to: 2...1_000))
        func x(_ time: Double) -> Double { plotLeft + (min(max(time, start), end) - start) / (end - start) * plotWidth }
        let rowCount = regionRows.count + healthRows.count
        let plotHeight = Double(max(rowCount, 1)) * Self.rowHeight
        let height = Self.top + plotHeight + 64

        var svg = SVGDocument()
        svg.raw(#"<?xml version="1.0" encoding="UTF-8"?>"#)
        svg.newline()
        svg.start(
            "svg",
            [
                "xmlns": "http://www.w3.org/2000/svg", "width": px(width), "height": px(height),
                "viewBox": "0 0 \(px(width)) \(px(height))", "class": "fencepost-timeline",
                "data-start": Timestamp.format(seconds: start), "data-end": Timestamp.format(seconds: end),
            ])
        svg.element("title", content: scene.caption ?? "Fencepost timeline")
        svg.element("style", content: Self.css)
        svg.element("rect", ["class": "background", "width": px(width), "height": px(height)])
        svg.newline()

        // Axis: ticks and grid lines over every row.
        svg.start("g", ["class": "axis"])
        for tick in axis.ticks {
            let tx = x(tick)
            svg.element(
                "line",
                ["class": "grid", "x1": px(tx), "x2": px(tx), "y1": px(Self.top - 6), "y2": px(Self.top + plotHeight)])
            // A label at an edge is anchored inside the picture, not cut in half by it.
            let label = axis.label(tick)
            let half = Double(label.count) * 3.3
            let anchor = tx + half > width - 4 ? "end" : (tx - half < plotLeft - 40 ? "start" : "middle")
            svg.element("text", ["x": px(tx), "y": px(Self.top - 10), "text-anchor": anchor], content: label)
        }
        svg.element("text", ["class": "axis-note", "x": "12", "y": px(Self.top - 10)], content: "UTC")
        svg.end()
        svg.newline()

        // Rows.
        let buckets = Self.bucket(forSpan: end - start)
        let severalDevices = Set(scene.visits.map(\.device)).count > 1
        for (index, row) in regionRows.enumerated() {
            let y = Self.top + Double(index) * Self.rowHeight
            svg.start(
                "g",
                [
                    "class": "row region-row", "data-region": row.region,
                    "data-device": severalDevices ? row.device : nil,
                ])
            if index % 2 == 0 {
                svg.element(
                    "rect", ["class": "stripe", "x": "0", "y": px(y), "width": px(width), "height": px(Self.rowHeight)])
            }
            var name = scene.regionNames[row.region].map { "\($0)" } ?? row.region
            if severalDevices { name += " · " + row.device }
            svg.element(
                "text", ["class": "row-label", "x": "10", "y": px(y + 15)],
                content: Self.clip(name, to: Self.labelWidth - 16))
            if let buckets {
                drawBuckets(row.visits, of: buckets, scene: scene, y: y, x: x, into: &svg)
            } else {
                for visit in row.visits {
                    drawVisit(visit, scene: scene, y: y, x: x, into: &svg)
                }
            }
            svg.end()
            svg.newline()
        }
        for (offset, row) in healthRows.enumerated() {
            let y = Self.top + Double(regionRows.count + offset) * Self.rowHeight
            let bars = scene.health.filter { $0.row == row }
            let largest = bars.compactMap(\.value).max() ?? 1
            svg.start("g", ["class": "row health-row", "data-row": row])
            svg.element(
                "rect",
                [
                    "class": "stripe health-stripe", "x": "0", "y": px(y), "width": px(width),
                    "height": px(Self.rowHeight),
                ])
            svg.element(
                "text", ["class": "row-label", "x": "10", "y": px(y + 15)], content: Self.healthTitles[row] ?? row)
            for bar in bars {
                let left = x(bar.start)
                let right = max(x(bar.end), left + 1.5)
                let shade = bar.value.map { 0.25 + 0.75 * min($0 / max(largest, 1), 1) }
                var body =
                    "\(row): \(bar.label) · \(Timestamp.format(seconds: bar.start)) – \(Timestamp.format(seconds: bar.end))"
                if row == "steps" { body = "steps: \(bar.label) on \(Timestamp.format(seconds: bar.start).prefix(10))" }
                svg.start(
                    "rect",
                    [
                        "class": "health \(row)", "data-event-id": bar.eventID, "x": px(left), "y": px(y + 4),
                        "width": px(right - left), "height": px(Self.rowHeight - 8),
                        "fill-opacity": shade.map { px($0) },
                    ])
                svg.element("title", content: body)
                svg.end()
                if right - left > Double(bar.label.count) * 6.5 + 6 {
                    svg.element(
                        "text",
                        ["class": "bar-text", "x": px((left + right) / 2), "y": px(y + 15), "text-anchor": "middle"],
                        content: bar.label)
                }
            }
            svg.end()
            svg.newline()
        }
        if rowCount == 0 {
            svg.element(
                "text", ["class": "empty", "x": px(plotLeft), "y": px(Self.top + 15)],
                content: "No visits or health events in this window.")
        }

        // Legend and caption.
        let legendY = Self.top + plotHeight + 22
        svg.start("g", ["class": "legend"])
        var lx = plotLeft
        // Swatches have classes of their own: counting bars by class never counts the legend.
        let legend =
            buckets.map { [("swatch swatch-bucket", "time inside per \($0.name) (darker: longer)")] } ?? [
                ("swatch swatch-visit", "visit"), ("swatch swatch-open", "open (to the last fix)"),
                ("swatch swatch-pass", "pass-through"),
                ("swatch swatch-gap", "crossing across a gap (not interpolated)"),
            ]
        for (classes, text) in legend {
            svg.element("rect", ["class": classes, "x": px(lx), "y": px(legendY - 9), "width": "18", "height": "10"])
            svg.element("text", ["x": px(lx + 24), "y": px(legendY)], content: text)
            lx += 24 + Double(text.count) * 6.6 + 18
        }
        svg.end()
        if let caption = scene.caption {
            svg.element("text", ["class": "caption", "x": "10", "y": px(legendY + 24)], content: caption)
        }
        svg.end()
        svg.newline()
        return svg.text
    }

    private func drawVisit(
        _ visit: MapVisit, scene: TimelineScene, y: Double, x: (Double) -> Double, into svg: inout SVGDocument
    ) {
        let left = x(visit.enteredAt)
        let right = max(x(scene.end(of: visit)), left + 2)
        var classes = ["visit"]
        if visit.isOpen { classes.append("open") }
        if visit.flags.contains("pass") { classes.append("pass") }
        if visit.flags.contains("gap") { classes.append("gap") }
        let exited =
            visit.exitedAt.map { Timestamp.format(seconds: $0) }
            ?? "open (last fix \(scene.lastFix[visit.device].map { Timestamp.format(seconds: $0) } ?? "unknown"))"
        var title = "\(visit.device) in \(visit.regionID): \(Timestamp.format(seconds: visit.enteredAt)) – \(exited)"
        if let reason = visit.exitReason, reason != "exit" { title += " · closed: \(reason)" }
        if !visit.flags.isEmpty { title += " · " + visit.flags.sorted().joined(separator: ", ") }
        title += " · visit \(visit.id)"
        svg.start(
            "rect",
            [
                "class": classes.joined(separator: " "), "data-visit-id": visit.id, "data-device": visit.device,
                "x": px(left), "y": px(y + 5), "width": px(right - left), "height": px(Self.rowHeight - 10),
            ])
        svg.element("title", content: title)
        svg.end()
        if visit.flags.contains("pass") {
            // A pass-through lasts seconds: a marker above it keeps it visible.
            svg.element("path", ["class": "pass-mark", "d": "M\(px((left + right) / 2 - 4)) \(px(y + 1))h8l-4 5Z"])
        }
        if visit.isOpen {
            svg.element("path", ["class": "open-mark", "d": "M\(px(right)) \(px(y + 4))l6 7l-6 7Z"])
        }
    }

    /// Regions with visits (each region and device, when there are several devices), in order of
    /// their first visit.
    static func regionRows(_ scene: TimelineScene) -> [(region: String, device: String, visits: [MapVisit])] {
        let severalDevices = Set(scene.visits.map(\.device)).count > 1
        var order: [String] = []
        var byRow: [String: [MapVisit]] = [:]
        for visit in scene.visits.sorted(by: { ($0.enteredAt, $0.id) < ($1.enteredAt, $1.id) }) {
            let key = severalDevices ? visit.regionID + "\u{0}" + visit.device : visit.regionID
            if byRow[key] == nil { order.append(key) }
            byRow[key, default: []].append(visit)
        }
        return order.map { key in
            let visits = byRow[key]!
            return (visits[0].regionID, visits[0].device, visits)
        }
    }

    /// How visits are summed when a span is too long to draw them one by one: nil up to half a
    /// year; weeks (from Mondays) up to three years; months beyond.
    static func bucket(forSpan span: Double) -> (name: String, start: (Double) -> Double, next: (Double) -> Double)? {
        let day = 86_400.0
        guard span > 183 * day else { return nil }
        if span <= 3 * 365.25 * day {
            let monday = 4 * day  // 1970-01-05
            return (
                "week", { ((($0 - monday) / (7 * day)).rounded(.down)) * 7 * day + monday }, { $0 + 7 * day }
            )
        }
        func monthStart(_ time: Double) -> Double {
            let (year, month, _, _, _) = TimeAxis.parts(time)
            return Double(Timestamp.daysSinceEpoch(year: year, month: month, day: 1)) * day
        }
        return ("month", monthStart, { monthStart($0 + 32 * day) })
    }

    /// A row's visits summed per bucket: one bar per bucket with time inside, darker for more
    /// time (against the row's fullest bucket), its title the visits and hours.
    private func drawBuckets(
        _ visits: [MapVisit], of bucket: (name: String, start: (Double) -> Double, next: (Double) -> Double),
        scene: TimelineScene, y: Double, x: (Double) -> Double, into svg: inout SVGDocument
    ) {
        var inside: [Double: Double] = [:]
        var entered: [Double: Int] = [:]
        for visit in visits {
            let end = scene.end(of: visit)
            entered[bucket.start(visit.enteredAt), default: 0] += 1
            var from = bucket.start(visit.enteredAt)
            var steps = 0
            while from < end, steps < 10_000 {
                let to = bucket.next(from)
                let overlap = min(end, to) - max(visit.enteredAt, from)
                if overlap > 0 { inside[from, default: 0] += overlap }
                from = to
                steps += 1
            }
        }
        // Shaded against the row's fullest bucket: a row's pattern shows, whatever its scale.
        let fullest = max(inside.values.max() ?? 1, 1)
        for from in inside.keys.sorted() {
            let to = bucket.next(from)
            let seconds = inside[from] ?? 0
            let share = min(seconds / fullest, 1)
            let left = x(from)
            let right = max(x(to) - 0.5, left + 1)
            svg.start(
                "rect",
                [
                    "class": "visit-bucket", "data-visits": String(entered[from] ?? 0), "x": px(left),
                    "y": px(y + 5), "width": px(right - left), "height": px(Self.rowHeight - 10),
                    "fill-opacity": px(0.15 + 0.85 * share),
                ])
            let hours = seconds / 3_600
            svg.element(
                "title",
                content:
                    "\(bucket.name) of \(Timestamp.format(seconds: from).prefix(10)): \(entered[from] ?? 0) visits entered, \(hours < 10 ? String(format: "%.1f", hours) : String(Int(hours.rounded()))) h inside"
            )
            svg.end()
        }
    }

    /// The time span drawn: the window asked for, else from the first to the last thing shown.
    static func span(_ scene: TimelineScene) -> (Double, Double) {
        var times: [Double] = []
        for visit in scene.visits { times += [visit.enteredAt, scene.end(of: visit)] }
        for bar in scene.health { times += [bar.start, bar.end] }
        let start = scene.since ?? times.min() ?? 0
        var end = scene.until ?? times.max() ?? start + 3_600
        if end <= start { end = start + 60 }
        // A little room on each side when the content decides.
        let margin = (end - start) * 0.02
        return (scene.since ?? start - margin, scene.until ?? end + margin)
    }

    static func clip(_ text: String, to width: Double) -> String {
        let limit = Int(clamping: width / 6.6, to: 4...100_000)
        return text.count <= limit ? text : String(text.prefix(limit - 1)) + "…"
    }

    static let css = """
        text{font-family:"DejaVu Sans",Verdana,Arial,sans-serif;font-size:11px;fill:#374151}\
        .background{fill:#fff}.stripe{fill:#f5f5f4}.health-stripe{fill:#f0fdf4}\
        .grid{stroke:#e7e5e4}.axis-note{fill:#78716c}\
        .row-label{font-size:12px;fill:#1f2937}\
        .visit,.swatch{fill:#2563eb;fill-opacity:.8;stroke:#1e40af;stroke-width:.6}\
        .visit.open,.swatch-open{fill:#f59e0b;stroke:#b45309}\
        .visit.pass,.swatch-pass{fill:#7c3aed;stroke:#5b21b6}\
        .visit.gap,.swatch-gap{stroke:#111827;stroke-width:1.2;stroke-dasharray:3 2}\
        .visit-bucket,.swatch-bucket{fill:#2563eb}\
        .pass-mark{fill:#7c3aed}.open-mark{fill:#b45309}\
        .health.steps{fill:#16a34a}.health.sleep{fill:#4338ca;fill-opacity:.75}.health.workout{fill:#ea580c;fill-opacity:.85}\
        .bar-text{fill:#fff;font-size:10px}\
        .caption,.empty{fill:#57534e;font-size:12px}
        """
}
