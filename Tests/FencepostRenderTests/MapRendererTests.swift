import FencepostCore
import FencepostFormats
import FencepostGeometry
import FencepostIngest
import FencepostRender
import FencepostTestSupport
import Foundation
import Testing

/// Maps drawn from scenes built in the test, read back with an XML parser: what they claim to
/// show, they show (one shape per region, one track per device, one marker per event), and
/// nothing lies outside the frame.
@Suite struct MapRendererTests {
    static let centre = Position(lon: 8.54, lat: 47.37)

    /// A circle, a square with a square hole, and a two-part multipolygon around Zurich.
    static func regions() -> [Region] {
        func square(_ lon: Double, _ lat: Double, _ half: Double) -> [Position] {
            [
                Position(lon: lon - half, lat: lat - half), Position(lon: lon + half, lat: lat - half),
                Position(lon: lon + half, lat: lat + half), Position(lon: lon - half, lat: lat + half),
                Position(lon: lon - half, lat: lat - half),
            ]
        }
        return [
            Region(id: "circle", name: "Round", shape: .circle(center: centre, radius: 300)),
            Region(
                id: "donut", name: "Donut",
                shape: .area(
                    .polygon(PolygonCoordinates(rings: [square(8.55, 47.37, 0.004), square(8.55, 47.37, 0.0015)])))),
            Region(
                id: "pair",
                shape: .area(
                    .multiPolygon([
                        PolygonCoordinates(rings: [square(8.53, 47.375, 0.002)]),
                        PolygonCoordinates(rings: [square(8.535, 47.38, 0.001)]),
                    ]))),
        ]
    }

    /// A walk west to east through the circle and the donut, a fix a minute, with one
    /// duplicate time and one (0, 0) fix for the filter to drop.
    static func walk() -> [Fix] {
        var fixes: [Fix] = (0..<40).map { step in
            Fix(
                device: "walker", time: 1_700_000_000 + Double(step) * 20, lat: 47.3702,
                lon: 8.532 + Double(step) * 0.0007, accuracy: 5)
        }
        fixes.insert(Fix(device: "walker", time: fixes[10].time, lat: 47.3705, lon: fixes[10].lon, accuracy: 5), at: 11)
        fixes.insert(Fix(device: "walker", time: fixes[20].time + 5, lat: 0, lon: 0), at: 21)
        return fixes
    }

    /// The walk through the pipeline, as `render map --trace` does it.
    static func scene() throws -> MapScene {
        let pipeline = try FixPipeline(regions: regions())
        var recorder = TrackRecorder(device: "walker")
        var events: [MapEvent] = []
        for (fix, outcome) in try pipeline.outcomes(of: walk()) {
            switch outcome {
            case .accepted(let new):
                recorder.accept(fix)
                events += new.map(MapEvent.init)
            case .dropped(let reason):
                recorder.drop(fix, reason: reason)
            }
        }
        return MapScene(
            regions: regions(), tracks: [recorder.track], events: events,
            openVisits: MapVisit.visits(from: events).filter(\.isOpen), caption: "test walk")
    }

    @Test func countsWhatItShows() throws {
        let scene = try Self.scene()
        #expect(scene.events.count >= 4, "the walk crosses two regions, in and out")
        let svg = try ParsedSVG(MapRenderer().svg(scene))
        #expect(svg.root.name == "svg")
        #expect(svg.count("region") == 3)
        #expect(Set(svg.all("region").compactMap { $0.attributes["data-region-id"] }) == ["circle", "donut", "pair"])
        #expect(svg.count("track") == 1)
        #expect(svg.all("track").first?.attributes["data-device"] == "walker")
        #expect(svg.count("event") == scene.events.count)
        #expect(Set(svg.all("event").compactMap { $0.attributes["data-event-id"] }) == Set(scene.events.map(\.id)))
        for kind in ["enter", "exit"] {
            #expect(svg.count("event", kind) == scene.events.filter { $0.kind == kind }.count)
        }
        // The duplicate is drawn faintly; (0, 0) is no place the walker was.
        #expect(svg.all("dropped-fix").compactMap { $0.attributes["data-reason"] } == ["duplicate_time"])
        #expect(svg.count("device-position") == 1)
        #expect(svg.count("scale-bar") == 1)
        #expect(svg.count("north-arrow") == 1)
        // Every region is labelled at this scale.
        #expect(Set(svg.all("label").compactMap { $0.attributes["data-label-for"] }) == ["circle", "donut", "pair"])
    }

    @Test func nothingOutsideTheFrame() throws {
        let text = MapRenderer(options: .init(width: 800)).svg(try Self.scene())
        Pictures.save("test-walk.svg", text)
        let svg = try ParsedSVG(text)
        let width = Double(svg.root.attributes["data-map-width"]!)!
        let height = Double(svg.root.attributes["data-map-height"]!)!
        for element in svg.elements where element.classes.isDisjoint(with: ["background", "frame", "footer-back"]) {
            let inViewport = !element.classes.intersection([
                "region", "track", "event", "dropped-fix", "device-position", "label", "open-visit",
            ]).isEmpty
            guard inViewport else { continue }
            // Markers are drawn around the origin and moved into place by their transform.
            var points = element.attributes["transform"] == nil ? element.pathPoints : []
            if points.isEmpty, let anchor = element.anchor { points = [anchor] }
            for point in points {
                #expect(
                    point.x >= 0 && point.x <= width && point.y >= 0 && point.y <= height,
                    "\(element.name) \(element.attributes) at \(point)")
            }
        }
    }

    @Test func circlesAreTrueCircles() throws {
        // Small: a plain circle whose radius in pixels is the radius on the ground at the scale.
        let small = Region(id: "small", shape: .circle(center: Self.centre, radius: 300))
        let drawing = MapRenderer().draw(MapScene(regions: [small]))
        let svg = try ParsedSVG(drawing.svg)
        let circle = try #require(svg.all("region").first)
        #expect(circle.name == "circle")
        let radius = try #require(circle.attributes["r"].flatMap(Double.init))
        // 300 m north of the centre, on the sphere the monitor measures with.
        let north = Position(lon: Self.centre.lon, lat: Self.centre.lat + 300 / Geodesy.metresPerDegreeLatitude)
        let expected = drawing.frame.point(Self.centre).y - drawing.frame.point(north).y
        #expect(abs(radius - expected) / expected < 0.01, "r \(radius) px, 300 m is \(expected) px")

        // Large and far north: Mercator stretches its far side, so it is drawn as a ring of
        // points each exactly the radius from the centre.
        let large = Region(id: "large", shape: .circle(center: Position(lon: 20, lat: 69), radius: 40_000))
        let bigDrawing = MapRenderer().draw(MapScene(regions: [large]))
        let big = try ParsedSVG(bigDrawing.svg)
        let path = try #require(big.all("region").first)
        #expect(path.name == "path")
        let points = path.pathPoints
        #expect(points.count >= 48)
        // Mercator stretches the far (north) side: the centre sits below the middle.
        let ys = points.map(\.y)
        let centreY = bigDrawing.frame.point(Position(lon: 20, lat: 69)).y
        let upper = centreY - ys.min()!
        let lower = ys.max()! - centreY
        #expect(upper > lower * 1.01, "north half \(upper) px, south half \(lower) px")
    }

    @Test func polygonsKeepTheirHoles() throws {
        let svg = try ParsedSVG(MapRenderer().svg(MapScene(regions: Self.regions())))
        let donut = try #require(svg.all("region").first { $0.attributes["data-region-id"] == "donut" })
        #expect(donut.attributes["fill-rule"] == "evenodd")
        #expect(donut.attributes["d"]!.filter { $0 == "M" }.count == 2, "the shell and its hole")
        let pair = try #require(svg.all("region").first { $0.attributes["data-region-id"] == "pair" })
        #expect(pair.attributes["d"]!.filter { $0 == "M" }.count == 2, "both parts of the multipolygon")
    }

    @Test func openVisitsAreHighlighted() throws {
        // A walk that stops inside the circle.
        let pipeline = try FixPipeline(regions: Self.regions())
        var events: [MapEvent] = []
        let walk = (0..<12).map { step in
            Fix(
                device: "d", time: 1_700_000_000 + Double(step) * 20, lat: 47.37,
                lon: 8.532 + Double(min(step, 8)) * 0.001, accuracy: 5)
        }
        for (_, outcome) in try pipeline.outcomes(of: walk) {
            if case .accepted(let new) = outcome { events += new.map(MapEvent.init) }
        }
        let open = MapVisit.visits(from: events).filter(\.isOpen)
        #expect(open.map(\.regionID) == ["circle"])
        let svg = try ParsedSVG(MapRenderer().svg(MapScene(regions: Self.regions(), events: events, openVisits: open)))
        #expect(svg.all("open-visit").compactMap { $0.attributes["data-visit-id"] } == open.map(\.id))
        #expect(svg.all("region", "has-open-visit").compactMap { $0.attributes["data-region-id"] } == ["circle"])
    }

    @Test func namesAreEscaped() throws {
        let region = Region(id: "x", name: #"<b>"Tom & Jerry's"</b>"#, shape: .circle(center: Self.centre, radius: 200))
        let text = MapRenderer().svg(MapScene(regions: [region]))
        let svg = try ParsedSVG(text)
        #expect(svg.all("label").first?.text == #"<b>"Tom & Jerry's"</b>"#)
        #expect(!text.contains("<b>"))
    }
}
