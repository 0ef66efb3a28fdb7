import FencepostCore
import FencepostGeometry

extension MapCanvas {
    func colour(of device: String) -> String {
        let index = scene.tracks.firstIndex { $0.device == device } ?? 0
        return MapRenderer.deviceColours[index % MapRenderer.deviceColours.count]
    }

    // MARK: - Tracks

    /// Each device's dropped fixes (faint), its line and its last known position.
    mutating func drawTracks() {
        guard !scene.tracks.isEmpty else { return }
        svg.start("g", ["class": "tracks"])
        for track in scene.tracks where !track.dropped.isEmpty {
            svg.start("g", ["class": "dropped", "data-device": track.device])
            for fix in track.dropped {
                let point = frame.point(fix.position)
                guard frame.contains(point) else { continue }
                emit(
                    "circle",
                    [
                        ("class", "dropped-fix fixed-size"), ("data-reason", fix.reason.rawValue),
                        ("transform", "translate(\(px(point.x)) \(px(point.y)))"), ("r", "2"),
                    ], title: "dropped (\(fix.reason.rawValue)) at \(Timestamp.format(seconds: fix.time))")
            }
            svg.end()
        }
        for track in scene.tracks {
            let points = PathGeometry.simplify(track.points.map { frame.point($0.position) }, tolerance: 0.5)
            let source = track.source == .crossings ? "track crossings" : "track"
            let title =
                track.source == .crossings
                ? "\(track.device): its boundary crossings joined in time order (the store keeps no fixes)"
                : "\(track.device): \(track.points.count) fixes drawn"
            emit(
                "path",
                [
                    ("class", source), ("data-device", track.device), ("stroke", colour(of: track.device)),
                    (
                        "d",
                        points.count > 1
                            ? PathGeometry.data(points, closed: false)
                            : points.first.map { "M\(px($0.x)) \(px($0.y))" } ?? ""
                    ),
                ], title: title)
        }
        for track in scene.tracks {
            guard let last = track.last else { continue }
            let point = frame.point(last.position)
            emit(
                "circle",
                [
                    ("class", "device-position fixed-size"), ("data-device", track.device),
                    ("fill", colour(of: track.device)),
                    ("transform", "translate(\(px(point.x)) \(px(point.y)))"), ("r", "5"),
                ], title: "\(track.device) last seen \(Timestamp.format(seconds: last.time))")
            let box = Box(minX: point.x - 5, minY: point.y - 5, maxX: point.x + 5, maxY: point.y + 5)
            // Devices are labelled before any region.
            labels.insert(
                LabelPlacer.Request(
                    text: track.device,
                    spots: Self.spots(around: DrawnShape(form: .path(""), box: box), text: track.device)), at: 0)
            labelTargets.insert(("device", track.device), at: 0)
        }
        svg.end()
        svg.newline()
    }

    // MARK: - Events

    /// One marker per event: where its boundary was crossed; a dwell (no crossing) on the
    /// track at its time, else at its visit's enter.
    mutating func drawEvents() {
        guard !scene.events.isEmpty else { return }
        var enterPositions: [String: Position] = [:]
        for event in scene.events where event.kind == "enter" {
            if let visit = event.visitID, let position = event.position { enterPositions[visit] = position }
        }
        var regionCentres: [String: Position] = [:]
        for region in scene.regions {
            let box = region.shape.bounds
            regionCentres[region.id] = Position(lon: (box.minX + box.maxX) / 2, lat: (box.minY + box.maxY) / 2)
        }
        let tracks = Dictionary(scene.tracks.map { ($0.device, $0) }, uniquingKeysWith: { first, _ in first })
        svg.start("g", ["class": "events"])
        for event in scene.events {
            let onTrack =
                event.position
                ?? tracks[event.device].flatMap { $0.source == .fixes ? $0.position(at: event.time) : nil }
            guard
                let position = onTrack ?? event.visitID.flatMap({ enterPositions[$0] }) ?? regionCentres[event.regionID]
            else { continue }
            var point = frame.point(position)
            // A dwell placed at its visit's enter is set beside the enter's marker, not on it.
            if onTrack == nil { point = Point(x: point.x + 7, y: point.y - 7) }
            let classes = (["event", event.kind] + event.flags + ["fixed-size"]).joined(separator: " ")
            let flags = event.flags.isEmpty ? "" : " (\(event.flags.joined(separator: ", ")))"
            emit(
                "path",
                [
                    ("class", classes), ("data-event-id", event.id), ("data-kind", event.kind),
                    ("data-device", event.device),
                    ("data-region", event.regionID), ("data-visit", event.visitID),
                    ("transform", "translate(\(px(point.x)) \(px(point.y)))"),
                    ("d", Self.marker(event.kind, at: Point(x: 0, y: 0))),
                ],
                title:
                    "\(event.kind)\(flags) · \(event.device) · \(event.regionID) · \(Timestamp.format(seconds: event.time))"
            )
        }
        svg.end()
        svg.newline()
    }

    /// Enter: a circle; exit: a square; dwell: a diamond; about 9 pixels across.
    static func marker(_ kind: String, at point: Point) -> String {
        let x = px(point.x)
        let y = px(point.y)
        switch kind {
        case "exit": return "M\(px(point.x - 4)) \(px(point.y - 4))h8v8h-8Z"
        case "dwell": return "M\(x) \(px(point.y - 5.5))l5.5 5.5l-5.5 5.5l-5.5 -5.5Z"
        default: return "M\(px(point.x - 4.5)) \(y)a4.5 4.5 0 1 0 9 0a4.5 4.5 0 1 0 -9 0Z"
        }
    }

    // MARK: - Labels

    /// Places and writes the labels; returns how many are shown at the drawn scale and how
    /// many there are.
    mutating func drawLabels() -> (shown: Int, total: Int) {
        var placer = LabelPlacer(fontSize: MapRenderer.fontSize, width: frame.width, height: frame.height)
        placer.obstacles = MapDecorations(frame: frame).boxes
        // A cross and, to its upper right, its number.
        placer.markers = problemMarks.map { (at: $0, radius: 18) }
        let placements = placer.place(labels)
        svg.start("g", ["class": "labels"])
        var shown = 0
        for placement in placements {
            if placement.minZoom == 1 { shown += 1 } else if !options.zoomableLabels { continue }
            let target = labelTargets[placement.request]
            let classes = ["device": "label device-label", "refused": "label refused-label"][target.kind] ?? "label"
            svg.element(
                "text",
                [
                    "class": classes, "x": px(placement.spot.at.x), "y": px(placement.spot.at.y),
                    "text-anchor": placement.spot.anchor,
                    ["device": "data-label-device", "refused": "data-label-refused"][target.kind] ?? "data-label-for":
                        target.id,
                    "data-min-zoom": placement.minZoom == 1 ? nil : px(placement.minZoom),
                ], content: labels[placement.request].text)
        }
        svg.end()
        svg.newline()
        return (shown, labels.count)
    }
}
