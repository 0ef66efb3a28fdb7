import FencepostGeometry
import FencepostTestSupport
import Foundation
import Testing

@testable import FencepostCore

/// Corridors: a line with a buffer, inside iff within the buffer of the line.
struct CorridorTests {
    let parser = RegionConfigParser()

    func corridor(_ line: [[Double]], buffer: Double) throws -> Region {
        let coordinates = line.map { "[\($0[0]),\($0[1])]" }.joined(separator: ",")
        let json =
            #"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"LineString","coordinates":[\#(coordinates)]},"properties":{"id":"route","buffer":\#(buffer)}}]}"#
        let file = parser.parse(Data(json.utf8), file: "route.geojson")
        #expect(file.issues.isEmpty, "\(file.issues)")
        return try #require(file.regions.first?.region)
    }

    @Test func insideIsWithinTheBufferOfTheLineAsGEOSMeasuresIt() throws {
        // An L through Dublin (about 1.3 km east, then 1.1 km north-east), 50 m either side.
        let region = try corridor([[-6.27, 53.34], [-6.25, 53.34], [-6.24, 53.35]], buffer: 50)
        #expect(region.shape.kind == "corridor")
        let context = GEOSContext()
        let area = try RegionArea.compile(region.shape, context: context)
        // The reference: GEOS's distance from the point to the line, both in local metres.
        guard case .corridor(let corridor) = region.shape else { return }
        let projection = LocalProjection(centredOn: Envelope(covering: corridor.line))
        let line = try Geometry(shape: projection.project(.lineString(corridor.line)), context: context)
        var generator = SplitMix64(seed: 7)
        var checked = 0
        for _ in 0..<4000 {
            let position = Position(
                lon: Double.random(in: -6.2720 ... -6.2380, using: &generator),
                lat: Double.random(in: 53.3385...53.3515, using: &generator))
            let (x, y) = projection.project(position)
            let distance = try line.distance(to: Geometry(shape: .point(Position(lon: x, lat: y)), context: context))
            // The outline's arcs are chords: within 0.13 % of the buffer of the exact circle.
            guard abs(distance - 50) > 0.1 else { continue }
            #expect(try area.locate(position).inside == (distance <= 50), "\(position): \(distance) m from the line")
            checked += 1
        }
        #expect(checked > 3900)
    }

    @Test func aLongLineKeepsItsWidthFromEndToEnd() throws {
        // 200 km due north from 50°N: 25 m either side, at the start, the middle and the end.
        let region = try corridor([[10, 50], [10, 51.8]], buffer: 25)
        let area = try RegionArea.compile(region.shape, context: GEOSContext())
        for lat in [50.01, 50.9, 51.79] {
            let metres = Geodesy.metresPerDegreeLongitude(atLatitude: lat)
            for (offset, inside) in [(24.9, true), (25.1, false), (-24.9, true), (-25.1, false)] {
                let position = Position(lon: 10 + offset / metres, lat: lat)
                #expect(try area.locate(position).inside == inside, "\(offset) m at \(lat)°N")
            }
        }
    }

    @Test func aWalkAcrossEntersAndLeavesAtTheBufferEdges() throws {
        let grid = LocalGrid()
        let line = [grid.at(-1000, 0), grid.at(1000, 0)]
        let region = Region(
            id: "road", shape: .corridor(try Corridor(line: line, buffer: 50, context: GEOSContext())))
        // North at 1 m/s from y = -200, a fix a second: in at y = -50 (150 s), out at y = 50 (250 s).
        var harness = try MonitorHarness(regions: [region], settings: MonitorHarness.raw)
        try harness.feed((0...400).map { grid.fix(0, -200 + Double($0), t: Double($0)) })
        #expect(harness.summary == ["enter@150.0", "exit@250.0"])
        // Canonical GeoJSON: a LineString with its buffer, read back the same.
        let again = try parser.region(fromFeature: region.feature.canonicalData(), source: "canonical")
        #expect(again == region)
        #expect(region.feature["geometry"]?["type"]?.stringValue == "LineString")
        #expect(region.feature["properties"]?["buffer"]?.numberValue == 50)
    }
}
