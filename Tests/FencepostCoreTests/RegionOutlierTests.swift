import FencepostCore
import FencepostGeometry
import Testing

/// A point typed `[lat, lon]` lands far from the rest and in range, so validation cannot refuse
/// it; `plan` warns, and says when swapping brings it back among the others.
@Suite struct RegionOutlierTests {
    static func stop(_ id: String, lon: Double, lat: Double) -> Region {
        Region(id: id, shape: .circle(center: Position(lon: lon, lat: lat), radius: 25))
    }

    @Test("a swapped stop among Limerick's is found, with the swap as the likely cause; none in a tidy set")
    func swappedStop() {
        var regions = (0..<5).map { Self.stop("s\($0)", lon: -8.62 + Double($0) * 0.01, lat: 52.66) }
        #expect(RegionOutliers.find(regions).isEmpty)
        regions.append(Self.stop("swapped", lon: 52.661, lat: -8.625))
        let outliers = RegionOutliers.find(regions)
        #expect(outliers.map(\.id) == ["swapped"])
        #expect(outliers.first?.swapLooksRight == true)
        #expect((outliers.first?.kilometres ?? 0) > 8_000)
    }

    @Test("regions spread over a continent are not outliers; one on another continent is, without a swap")
    func spread() {
        let cities = [
            (2.35, 48.86), (13.40, 52.52), (-3.70, 40.42), (12.50, 41.90), (16.37, 48.21), (-0.13, 51.51),
        ].enumerated().map { Self.stop("c\($0.offset)", lon: $0.element.0, lat: $0.element.1) }
        #expect(RegionOutliers.find(cities).isEmpty)
        let withSydney = cities + [Self.stop("sydney", lon: 151.2, lat: -33.87)]
        let outliers = RegionOutliers.find(withSydney)
        #expect(outliers.map(\.id) == ["sydney"])
        #expect(outliers.first?.swapLooksRight == false)
    }
}
