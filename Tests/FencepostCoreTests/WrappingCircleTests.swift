import FencepostCore
import FencepostGeometry
import Testing

/// Circles over a pole or across the antimeridian: their lon/lat box spans every longitude, so
/// a fix on the far side of ±180° is still a candidate, and the exact distance decides.
@Suite struct WrappingCircleTests {
    @Test(
        "a fix across the antimeridian from a circle's centre, or beyond the pole, is inside by distance",
        arguments: [
            (Position(lon: 179.99, lat: -17.8), Position(lon: -179.99, lat: -17.8), true),  // Fiji, 2.1 km apart
            (Position(lon: 179.99, lat: -17.8), Position(lon: -179.9, lat: -17.8), false),  // 11.6 km apart
            (Position(lon: 0, lat: 89.99), Position(lon: 180, lat: 89.99), true),  // over the pole, 2.2 km apart
        ])
    func wrapping(centre: Position, fix: Position, inside: Bool) throws {
        let region = Region(id: "c", shape: .circle(center: centre, radius: 5_000))
        #expect(region.shape.bounds.minX == -180 && region.shape.bounds.maxX == 180)
        var harness = try MonitorHarness(regions: [region], settings: MonitorHarness.raw)
        try harness.feed([Fix(device: "d", time: 0, lat: fix.lat, lon: fix.lon)])
        #expect(harness.summary == (inside ? ["enter@0.0"] : []))
    }
}
