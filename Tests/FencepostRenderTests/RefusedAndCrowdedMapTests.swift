import FencepostCore
import FencepostFormats
import FencepostGeometry
import FencepostRender
import FencepostTestSupport
import Foundation
import Testing

/// The two maps that need more than drawing: a refused config (its problems marked where they
/// are) and 10,000 regions (still legible).
@Suite struct RefusedAndCrowdedMapTests {
    /// Around Tsinghua, Beijing: a valid circle, a bow tie (self-intersecting), a stop with
    /// [lat, lon] swapped and a negative radius.
    static let badConfig = """
        {"type": "FeatureCollection", "features": [
          {"type": "Feature", "geometry": {"type": "Point", "coordinates": [116.31, 40.0]}, "properties": {"id": "good", "radius": 100}},
          {"type": "Feature", "geometry": {"type": "Polygon", "coordinates": [[[116.32, 40.0], [116.33, 40.01], [116.33, 40.0], [116.32, 40.01], [116.32, 40.0]]]}, "properties": {"id": "bowtie"}},
          {"type": "Feature", "geometry": {"type": "Point", "coordinates": [40.005, 116.315]}, "properties": {"id": "swapped", "radius": 50}},
          {"type": "Feature", "geometry": {"type": "Point", "coordinates": [116.305, 39.995]}, "properties": {"id": "negative", "radius": -5}}
        ]}
        """

    @Test func refusedConfigIsDrawnWithItsProblemsMarked() throws {
        let file = try TemporaryFile(Self.badConfig, suffix: ".geojson")
        defer { file.remove() }
        let files = RegionConfigLoader.files([file.path])
        let error = try #require(throws: RegionConfigError.self) { try RegionConfig.merge(files) }
        #expect(error.issues.count == 3)
        let refused = RefusedConfig.sketch(
            error, sources: [file.path: try Data(contentsOf: URL(fileURLWithPath: file.path))])
        #expect(Set(refused.features.compactMap(\.id)) == ["bowtie", "swapped", "negative"])
        let bowtie = try #require(refused.features.first { $0.id == "bowtie" })
        // GEOS finds the crossing in the middle of the bow tie.
        let mark = try #require(bowtie.marks.first)
        #expect(abs(mark.lon - 116.325) < 1e-6 && abs(mark.lat - 40.005) < 1e-6)
        let swapped = try #require(refused.features.first { $0.id == "swapped" })
        #expect(swapped.swapped)
        #expect(
            swapped.circle?.center == Position(lon: 116.315, lat: 40.005), "drawn where [lon, lat] would have put it")

        let valid = files.flatMap { $0.regions.map(\.region) }
        let text = MapRenderer().svg(MapScene(regions: valid, refused: refused))
        Pictures.save("test-refused.svg", text)
        let svg = try ParsedSVG(text)
        #expect(svg.count("region") == 1)
        #expect(svg.count("refused-shape") == 3)
        #expect(svg.count("problem-mark") == 3)
        let problems = svg.all("problem").map(\.text).joined(separator: " ")
        #expect(problems.contains("Self-intersection"))
        #expect(problems.contains("looks like [lat, lon]"))
        #expect(problems.contains("radius must be greater than 0"))
        // The mark sits on the crossing.
        let bowtieShape = try #require(
            svg.all("refused-shape").first { $0.attributes["data-feature"]?.hasSuffix("#1") == true })
        let crossMark = try #require(
            svg.all("problem-mark").first { $0.attributes["data-problems"] == bowtieShape.attributes["data-problems"] })
        let xs = bowtieShape.pathPoints.map(\.x)
        let ys = bowtieShape.pathPoints.map(\.y)
        let anchor = try #require(crossMark.anchor)
        #expect(abs(anchor.x - (xs.min()! + xs.max()!) / 2) < 1 && abs(anchor.y - (ys.min()! + ys.max()!) / 2) < 1)
    }

    /// 10,000 circles and squares over a 20 km city, like the regions benchmark's workload.
    static func crowdedRegions() -> [Region] {
        var random = SplitMix64(seed: 7)
        return (0..<10_000).map { index in
            let lon = 8.45 + random.unit() * 0.27
            let lat = 47.3 + random.unit() * 0.18
            if index % 3 == 0 {
                let half = 0.0003 + random.unit() * 0.002
                let ring = [
                    Position(lon: lon - half, lat: lat - half), Position(lon: lon + half, lat: lat - half),
                    Position(lon: lon + half, lat: lat + half), Position(lon: lon - half, lat: lat + half),
                    Position(lon: lon - half, lat: lat - half),
                ]
                return Region(
                    id: "r\(index)", name: "Area \(index)", shape: .area(.polygon(PolygonCoordinates(rings: [ring]))))
            }
            return Region(
                id: "r\(index)", name: "Stop \(index)",
                shape: .circle(center: Position(lon: lon, lat: lat), radius: 20 + random.unit() * 180))
        }
    }

    @Test func tenThousandRegionsStayLegible() throws {
        let regions = Self.crowdedRegions()
        let drawing = MapRenderer().draw(MapScene(regions: regions))
        Pictures.save("test-10000-regions.svg", drawing.svg)
        let svg = try ParsedSVG(drawing.svg)
        // Every region is either a shape of its own or counted in a cluster.
        let shapes = svg.all("region")
        let clustered = svg.all("region-cluster").map { Int($0.attributes["data-region-count"]!)! }.reduce(0, +)
        #expect(shapes.count + clustered == regions.count)
        #expect(clustered == drawing.clusteredRegions)
        let ids =
            shapes.compactMap { $0.attributes["data-region-id"] }
            + svg.all("region-cluster").flatMap {
                $0.attributes["data-region-ids"]!.split(separator: " ").map(String.init)
            }
        #expect(Set(ids).count == regions.count)
        // Legible: the labels shown do not overlap (boxes estimated as the placer does).
        let labels = svg.all("label").filter { $0.attributes["data-min-zoom"] == nil }
        #expect(labels.count == drawing.labelsShown)
        #expect(labels.count > 10 && labels.count < regions.count / 10)
        var boxes: [(Double, Double, Double, Double)] = []
        for label in labels {
            let x = Double(label.attributes["x"]!)!
            let y = Double(label.attributes["y"]!)!
            let width = Double(label.text.count) * 11 * 0.6
            let left =
                label.attributes["text-anchor"] == "end"
                ? x - width : label.attributes["text-anchor"] == "middle" ? x - width / 2 : x
            boxes.append((left, y - 8.8, left + width, y + 2.75))
        }
        var overlaps: [String] = []
        for i in boxes.indices {
            for j in boxes.indices where j > i {
                let a = boxes[i]
                let b = boxes[j]
                if a.0 < b.2 && b.0 < a.2 && a.1 < b.3 && b.1 < a.3 {
                    overlaps.append("\(labels[i].text) / \(labels[j].text)")
                }
            }
        }
        #expect(overlaps.isEmpty, "overlapping labels: \(overlaps.prefix(5))")
        // Small enough to open: a few hundred bytes per region, titles included.
        #expect(drawing.svg.utf8.count < regions.count * 300)
    }
}
