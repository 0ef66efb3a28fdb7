import FencepostGeometry
import Testing

@Suite struct GeodesyTests {
    @Test func oneDegreeOfLatitudeOnTheSphere() {
        let metres = Geodesy.distance(Position(lon: 0, lat: 0), Position(lon: 0, lat: 1))
        // π R / 180 with R = 6 371 008.8 m
        #expect(abs(metres - 111_195.08) < 0.01)
        #expect(abs(Geodesy.metresPerDegreeLatitude - 111_195.08) < 0.01)
    }

    @Test func knownCityDistance() {
        // Zurich main station to Bern main station: about 95.5 km on the sphere.
        let zurich = Position(lon: 8.5402, lat: 47.3782)
        let bern = Position(lon: 7.4391, lat: 46.9490)
        #expect(abs(Geodesy.distance(zurich, bern) - 95_500) < 500)
        #expect(Geodesy.distance(zurich, zurich) == 0)
        #expect(Geodesy.distance(zurich, bern) == Geodesy.distance(bern, zurich))
    }

    @Test func antipodesAreHalfTheCircumference() {
        let distance = Geodesy.distance(Position(lon: 0, lat: 0), Position(lon: 180, lat: 0))
        #expect(abs(distance - .pi * Geodesy.earthRadius) < 1e-6)
    }

    @Test func localProjectionAgreesWithHaversineNearby() {
        let origin = Position(lon: 13.40, lat: 52.52)
        let projection = LocalProjection(origin: origin)
        let target = Position(lon: 13.41, lat: 52.525)
        let (x, y) = projection.project(target)
        let planar = (x * x + y * y).squareRoot()
        #expect(abs(planar - Geodesy.distance(origin, target)) / planar < 0.001)
        let back = projection.unproject(x: x, y: y)
        #expect(abs(back.lon - target.lon) < 1e-12 && abs(back.lat - target.lat) < 1e-12)
    }

    @Test func longitudeShrinksWithLatitude() {
        #expect(abs(Geodesy.metresPerDegreeLongitude(atLatitude: 60) - Geodesy.metresPerDegreeLatitude / 2) < 1e-6)
    }
}
