import FencepostCore
import FencepostFormats
import FencepostGeometry
import FencepostRender
import FencepostTestSupport
import Foundation
import Testing

/// Rendering is total: no region a config may hold, and no refused one, can trap the map (a
/// refused `radius: 1e308` once crashed `render map` and the live page's map in `serve`).
@Suite struct ExtremeRegionMapTests {
    @Test("the largest accepted circles, near the poles and the antimeridian, a polygon touching a pole: drawn")
    func extremesOfAcceptedConfigs() throws {
        let regions = [
            Region(
                id: "north",
                shape: .circle(center: Position(lon: 179.9, lat: 89.9), radius: RegionLimits.radius.maximum)),
            Region(
                id: "south", shape: .circle(center: Position(lon: -180, lat: -90), radius: RegionLimits.radius.maximum)),
            Region(id: "dot", shape: .circle(center: Position(lon: 0.001, lat: 0.001), radius: 0.001)),
            Region(
                id: "cap",
                shape: .area(
                    .polygon(
                        PolygonCoordinates(rings: [
                            [
                                Position(lon: -180, lat: 80), Position(lon: 180, lat: 80), Position(lon: 180, lat: 90),
                                Position(lon: -180, lat: 90), Position(lon: -180, lat: 80),
                            ]
                        ])))),
        ]
        let text = MapRenderer().svg(MapScene(regions: regions))
        Pictures.save("test-extreme-regions.svg", text)
        let svg = try ParsedSVG(text)
        let drawn = Set(svg.elements.compactMap { $0.attributes["data-region-id"] })
        #expect(drawn == ["north", "south", "dot", "cap"], "\(drawn)")
    }

    @Test("a refused config with a radius of 1e308 and coordinates of 1e300 is drawn with its problems")
    func refusedHugeNumbers() throws {
        let text = """
            {"type": "FeatureCollection", "features": [
              {"type": "Feature", "geometry": {"type": "Point", "coordinates": [8.0, 47.0]}, "properties": {"id": "ok", "radius": 100}},
              {"type": "Feature", "geometry": {"type": "Point", "coordinates": [8.0, 47.0]}, "properties": {"id": "huge", "radius": 1e308}},
              {"type": "Feature", "geometry": {"type": "Point", "coordinates": [1e300, -1e300]}, "properties": {"id": "far", "radius": 5}}
            ]}
            """
        let svg = try Self.refusedMap(text)
        #expect(svg.count("problem") >= 2)
        #expect(svg.all("problem").map(\.text).joined().contains("at most 1000000 m"))
    }
}

extension ExtremeRegionMapTests {
    @Test("a refused config's map fits its refused features, not a valid point swapped into the ocean")
    func refusedMapFitsTheProblems() throws {
        let text = """
            {"type": "FeatureCollection", "features": [
              {"type": "Feature", "geometry": {"type": "Point", "coordinates": [8.54, 47.37]}, "properties": {"id": "good", "radius": 100}},
              {"type": "Feature", "geometry": {"type": "Point", "coordinates": [47.37, 8.54]}, "properties": {"id": "swapped", "radius": 100}},
              {"type": "Feature", "geometry": {"type": "Polygon", "coordinates": [[[8.55, 47.37], [8.56, 47.38], [8.56, 47.37], [8.55, 47.38], [8.55, 47.37]]]}, "properties": {"id": "bowtie"}}
            ]}
            """
        let svg = try Self.refusedMap(text)
        let bowtie = try #require(svg.all("refused-shape").first)
        let xs = bowtie.pathPoints.map(\.x)
        #expect((xs.max() ?? 0) - (xs.min() ?? 0) > 200, "the bow tie fills the map, not a dot")
    }
}

extension ExtremeRegionMapTests {
    /// The map `render map` draws of a config that must be refused: its valid regions and its
    /// refused features with their problems.
    static func refusedMap(_ text: String) throws -> ParsedSVG {
        let file = try TemporaryFile(text, suffix: ".geojson")
        defer { file.remove() }
        let files = RegionConfigLoader.files([file.path])
        let error = try #require(throws: RegionConfigError.self) { try RegionConfig.merge(files) }
        let refused = RefusedConfig.sketch(
            error, sources: [file.path: try Data(contentsOf: URL(fileURLWithPath: file.path))])
        let valid = files.flatMap { $0.regions.map(\.region) }
        return try ParsedSVG(MapRenderer().svg(MapScene(regions: valid, refused: refused)))
    }
}
