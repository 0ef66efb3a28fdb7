public import FencepostGeometry

/// Regions that lie far from all the others: most often a point typed `[lat, lon]` where GeoJSON
/// wants `[lon, lat]`, which validation cannot refuse when both numbers are in range (a stop in
/// Limerick, `[52.66, -8.62]`, lands in the ocean off Africa). `plan` warns about them.
public enum RegionOutliers {
    /// A region far from the rest, and whether swapping its coordinates brings it among them.
    public struct Outlier: Sendable, Equatable {
        public var id: String
        /// Kilometres from the middle of the other regions.
        public var kilometres: Double
        public var swapLooksRight: Bool
    }

    /// The regions (at least 3 in all) farther from the set's middle (the median of their
    /// centres) than 200 km and than 20 times the typical distance: linear in the count.
    public static func find(_ regions: [Region]) -> [Outlier] {
        find(boxes: regions.map { ($0.id, $0.shape.bounds) })
    }

    /// The same from each region's id and lon/lat box.
    public static func find(boxes regions: [(id: String, bounds: Envelope)]) -> [Outlier] {
        guard regions.count >= 3 else { return [] }
        let centres = regions.map { region -> Position in
            let box = region.bounds
            return Position(lon: (box.minX + box.maxX) / 2, lat: (box.minY + box.maxY) / 2)
        }
        let middle = Position(lon: median(centres.map(\.lon)), lat: median(centres.map(\.lat)))
        let distances = centres.map { Geodesy.distance(middle, $0) }
        let typical = median(distances)
        let limit = max(200_000, 20 * typical)
        var outliers: [Outlier] = []
        for (index, region) in regions.enumerated() where distances[index] > limit {
            let centre = centres[index]
            var swapFits = false
            if abs(centre.lon) <= 90 {
                let swapped = Position(lon: centre.lat, lat: centre.lon)
                swapFits = Geodesy.distance(middle, swapped) <= limit
            }
            outliers.append(Outlier(id: region.id, kilometres: distances[index] / 1_000, swapLooksRight: swapFits))
        }
        return outliers
    }

    private static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
    }
}
