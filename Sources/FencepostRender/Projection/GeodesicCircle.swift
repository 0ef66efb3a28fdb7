import FencepostGeometry
import Foundation

/// A circle region as the monitor sees it (every point within `radius` metres, haversine, of
/// the centre) drawn on the map: the ring of points at exactly that distance, projected.
enum GeodesicCircle {
    /// Positions at `radius` metres from `center`, every 360/`count` degrees of bearing, on
    /// Fencepost's sphere. Latitudes are clamped short of the poles.
    static func ring(center: Position, radius: Double, count: Int) -> [Position] {
        let angular = radius / Geodesy.earthRadius
        let lat1 = center.lat * .pi / 180
        let lon1 = center.lon * .pi / 180
        return (0..<count).map { step in
            let bearing = Double(step) / Double(count) * 2 * .pi
            let lat2 = asin(min(1, max(-1, sin(lat1) * cos(angular) + cos(lat1) * sin(angular) * cos(bearing))))
            let lon2 = lon1 + atan2(sin(bearing) * sin(angular) * cos(lat1), cos(angular) - sin(lat1) * sin(lat2))
            return Position(lon: lon2 * 180 / .pi, lat: min(max(lat2 * 180 / .pi, -89.9), 89.9))
        }
    }

    /// How far, in pixels, the projected ring departs from a plain circle of the centre's
    /// scale: Mercator's stretch grows towards the pole, so the far side of a large circle is
    /// drawn bigger than the near side. Under a quarter pixel, a plain circle is exact enough.
    static func distortion(center: Position, radius: Double, radiusPixels: Double) -> Double {
        let spread = radius / Geodesy.earthRadius  // radians of latitude from centre to edge
        return radiusPixels * (abs(tan(center.lat * .pi / 180)) * spread + spread * spread)
    }
}
